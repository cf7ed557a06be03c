import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'

type Words = Record<string, string>
// the console's files are the browser's ES modules (no types): loaded by URL
const consoleModule = (name: string) => import(new URL(`../../console/${name}`, import.meta.url).href)
const { ERRORS_EN } = (await consoleModule('i18n-errors.js')) as { ERRORS_EN: Words }
const { ERRORS_AR } = (await consoleModule('i18n-errors-ar.js')) as { ERRORS_AR: Words }
const { CATALOGUES, GROUPS, translator } = (await consoleModule('i18n.js')) as {
  CATALOGUES: Record<'en' | 'ar', Words>
  GROUPS: Array<[string, Words, Words]>
  translator: (lang: 'en' | 'ar') => (key: string, values?: Record<string, unknown>) => string
}

/** The error codes the rental publishes: the OpenAPI document's ErrorCode. */
const published = (
  JSON.parse(readFileSync(new URL('../../../../docs/openapi/rental.json', import.meta.url), 'utf8')) as {
    components: { schemas: { ErrorCode: { enum: string[] } } }
  }
).components.schemas.ErrorCode.enum

const ROUTE_OR_SCHEMA = /\/api\/|\/v1\/|\bbody\.|\b(GET|POST|PUT|PATCH|DELETE) \//

describe('the console’s words (no browser)', () => {
  it('has a sentence in English and in Arabic for every published error code, and for no other', () => {
    assert.ok(published.length > 100, 'the published ErrorCode enum')
    for (const code of published) {
      const en = ERRORS_EN[code]
      const ar = ERRORS_AR[code]
      assert.ok(en?.trim(), `English sentence for ${code}`)
      assert.ok(ar?.trim(), `Arabic sentence for ${code}`)
      assert.match(ar!, /[\u0600-\u06FF]/, `${code}: the Arabic sentence is in Arabic`)
      assert.notEqual(en, ar, code)
    }
    assert.deepEqual(Object.keys(ERRORS_EN).sort(), [...published].sort())
    assert.deepEqual(Object.keys(ERRORS_AR).sort(), [...published].sort())
  })

  it('the English and Arabic catalogues have the same keys, and none names a route or a schema path', () => {
    const { en, ar } = CATALOGUES
    assert.deepEqual(
      Object.keys(en).filter((key) => !(key in ar)),
      [],
      'keys in English only',
    )
    assert.deepEqual(
      Object.keys(ar).filter((key) => !(key in en)),
      [],
      'keys in Arabic only',
    )
    for (const [lang, words] of Object.entries({ en, ar }))
      for (const [key, text] of Object.entries(words))
        assert.doesNotMatch(text, ROUTE_OR_SCHEMA, `${lang} ${key}: ${text}`)
    for (const code of published) assert.equal(en[`error.code.${code}`], ERRORS_EN[code])
  })

  it('each group of words has exactly the same keys in English and Arabic, the same {slots}, and Arabic words', () => {
    const slots = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort()
    assert.ok(GROUPS.length >= 6, 'the catalogue’s groups')
    for (const [group, en, ar] of GROUPS) {
      assert.deepEqual(Object.keys(ar).sort(), Object.keys(en).sort(), `${group}: the same keys`)
      for (const [key, text] of Object.entries(en)) {
        const arabic = ar[key]!
        assert.ok(text.trim() && arabic.trim(), `${group} ${key}: not empty`)
        assert.deepEqual(slots(arabic), slots(text), `${group} ${key}: the same {slots}`)
        // a name the same in both (PDF) aside, the Arabic words are Arabic
        if (arabic !== text) assert.match(arabic, /[\u0600-\u06FF]/, `${group} ${key}: in Arabic`)
      }
    }
    // the catalogues are the groups merged: nothing else adds a word in one language only
    assert.deepEqual(Object.keys(CATALOGUES.ar).sort(), Object.keys(CATALOGUES.en).sort())
  })

  it('every catalogue file of the console is one of the groups the same-keys checks cover', async () => {
    const files = readdirSync(new URL('../../console/', import.meta.url)).filter((name) =>
      /^i18n-[a-z-]+\.js$/.test(name),
    )
    assert.ok(files.length >= 10, 'the catalogue files')
    const grouped = new Set<Words>(GROUPS.flatMap(([, en, ar]) => [en, ar]))
    for (const file of files)
      for (const [name, words] of Object.entries((await consoleModule(file)) as Record<string, unknown>)) {
        // the error sentences are grouped under `error.code.` keys (checked against ErrorCode above)
        if (name === 'ERRORS_EN' || name === 'ERRORS_AR') continue
        if (typeof words !== 'object' || words === null) continue
        assert.ok(grouped.has(words as Words), `${file} ${name}: in i18n.js GROUPS`)
      }
  })

  it('isolates the values put into an Arabic sentence, so that an English name keeps its full stop at its end', () => {
    const key = 'market.hire'
    assert.match(CATALOGUES.ar[key]!, /\{agent\}/)
    const arabic = translator('ar')(key, { agent: 'Summariser v2.' })
    assert.ok(arabic.includes('\u2068Summariser v2.\u2069'), arabic)
    assert.equal(
      translator('en')(key, { agent: 'Summariser' }),
      CATALOGUES.en[key]!.replace('{agent}', 'Summariser'),
    )
  })
})
