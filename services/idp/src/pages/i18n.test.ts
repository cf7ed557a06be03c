import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { describeDevice, formatRelative, formatWhen, fromAcceptLanguage, fromUiLocales, t } from './i18n.ts'

describe('the hosted pages’ languages', () => {
  it('takes the first supported ui_locales tag, and Accept-Language by weight', () => {
    assert.equal(fromUiLocales('fr-CA ar-AE en'), 'ar')
    assert.equal(fromUiLocales('de fr'), undefined)
    assert.equal(fromUiLocales(['ar']), undefined)
    assert.equal(fromAcceptLanguage('fr, en;q=0.4, ar;q=0.8'), 'ar')
    assert.equal(fromAcceptLanguage('ar;q=0, en-GB'), 'en')
    assert.equal(fromAcceptLanguage('*'), undefined)
  })

  it('fills slots in either language, and keeps a name that is not a phrase', () => {
    assert.equal(t('ar', '{browser} on {system}', { browser: 'Chrome', system: 'Linux' }), 'Chrome على Linux')
    assert.equal(t('ar', 'Acme Console' as never), 'Acme Console')
  })

  it('names devices and dates as people read them', () => {
    const safari =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1'
    assert.equal(describeDevice('en', safari), 'Safari on iOS')
    assert.equal(
      describeDevice(
        'en',
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      ),
      'Edge on Windows',
    )
    assert.equal(describeDevice('en', 'curl/8.5.0'), 'curl/8.5.0')
    assert.equal(describeDevice('ar', null), 'جهاز غير معروف')
    const at = new Date('2026-11-24T19:40:00Z')
    assert.equal(formatWhen('en', at), '24 Nov 2026, 19:40 UTC')
    assert.equal(formatRelative('en', at, new Date('2026-11-24T19:45:10Z')), '5 minutes ago')
    assert.equal(formatRelative('en', at, new Date('2026-11-24T19:40:30Z')), 'now')
  })
})
