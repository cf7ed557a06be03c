import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { CATALOGUES, LANGUAGES } from '../../src/areas/public/i18n.ts'
import { AR_ERRORS, rentalErrors } from '../../src/errors.ts'

const ARABIC = /[\u0600-\u06FF]/

describe('rental message catalogues: every error code and every i18n key in English and Arabic', () => {
  it('has an Arabic message for every error code, and no message for a code that does not exist', () => {
    const codes = Object.keys(rentalErrors.codes).sort()
    assert.deepEqual(Object.keys(AR_ERRORS).sort(), codes)
    for (const code of codes) {
      // English: the catalogue's description (the messages raised are English)
      assert.ok(rentalErrors.codes[code as keyof typeof rentalErrors.codes].description.trim(), code)
      assert.match(AR_ERRORS[code as keyof typeof AR_ERRORS], ARABIC, `${code} has an Arabic message`)
    }
  })

  it('has every i18n key, non-empty, in both languages', () => {
    const keys = (lang: (typeof LANGUAGES)[number]) => Object.keys(CATALOGUES[lang].messages).sort()
    assert.deepEqual(keys('ar'), keys('en'))
    for (const lang of LANGUAGES)
      for (const [key, text] of Object.entries(CATALOGUES[lang].messages))
        assert.ok(text.trim(), `${lang} ${key}`)
  })
})
