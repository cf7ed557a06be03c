import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { moneyLocaleOf } from '@svc/kit'
import { CATALOGUES, LANGUAGES } from '../../src/areas/public/i18n.ts'
import { fromAcceptLanguage } from '../../src/http/locale.ts'
import { type FullStack, startFullStack } from '../support/full-stack.ts'

describe('the member’s language', () => {
  let stack: FullStack
  before(async () => {
    stack = await startFullStack()
  })
  after(() => stack?.close())

  it('every message key exists, non-empty, in both languages', () => {
    const keys = (lang: (typeof LANGUAGES)[number]) => Object.keys(CATALOGUES[lang].messages).sort()
    assert.deepEqual(keys('ar'), keys('en'))
    for (const lang of LANGUAGES)
      for (const [key, text] of Object.entries(CATALOGUES[lang].messages))
        assert.ok(text.trim().length > 0, `${lang}: ${key} is empty`)
    assert.equal(CATALOGUES.ar.dir, 'rtl')
  })

  it('reads Accept-Language by its q-values', () => {
    assert.equal(fromAcceptLanguage('ar-AE,en;q=0.8'), 'ar')
    assert.equal(fromAcceptLanguage('fr, en;q=0.5, ar;q=0.9'), 'ar')
    assert.equal(fromAcceptLanguage('fr, de'), null)
    assert.equal(fromAcceptLanguage('ar;q=0, en'), 'en')
    assert.equal(fromAcceptLanguage(undefined), null)
  })

  it('is taken from Accept-Language until chosen, then kept per member; money follows it', async () => {
    const carol = await stack.signInWith('carol.locale@example.test')
    const read = (headers: Record<string, string> = {}) =>
      carol.jar.fetch(`${stack.rental.url}/api/locale`, { headers })
    assert.deepEqual(await (await read()).json(), {
      locale: 'en',
      dir: 'ltr',
      chosen: null,
      source: 'default',
    })
    assert.deepEqual(await (await read({ 'accept-language': 'ar,en;q=0.5' })).json(), {
      locale: 'ar',
      dir: 'rtl',
      chosen: null,
      source: 'accept-language',
    })
    const set = await stack.call(carol, 'POST', '/api/locale', { locale: 'ar' })
    assert.equal(set.status, 200, set.text)
    assert.deepEqual(set.body, { locale: 'ar', dir: 'rtl', chosen: 'ar', source: 'member' })
    assert.deepEqual(await (await read({ 'accept-language': 'en' })).json(), {
      locale: 'ar',
      dir: 'rtl',
      chosen: 'ar',
      source: 'member',
    })
    const again = await stack.call(carol, 'POST', '/api/locale', { locale: 'ar' })
    assert.equal(again.status, 200)
    const events = await stack.db
      .selectFrom('rental_events')
      .select('data')
      .where('type', '=', 'member.locale_changed')
      .where('org_id', '=', carol.me.organization.id)
      .execute()
    assert.equal(events.length, 1, 'choosing the same language again records nothing')
    for (const bad of [{ locale: 'fr' }, { locale: 'ar', extra: 1 }, {}, { locale: 7 }])
      assert.equal((await stack.call(carol, 'POST', '/api/locale', bad)).status, 400, JSON.stringify(bad))
    assert.equal((await fetch(`${stack.rental.url}/api/locale`)).status, 401)

    // the rule the routes' amounts follow: ?lang=, else the member's language, else Accept-Language
    const headers = { 'accept-language': 'en' }
    assert.equal(moneyLocaleOf({ headers, membership: { locale: 'ar' } }), 'ar')
    assert.equal(moneyLocaleOf({ headers, query: { lang: 'en' }, membership: { locale: 'ar' } }), 'en')
    assert.equal(moneyLocaleOf({ headers: { 'accept-language': 'ar' }, membership: { locale: null } }), 'ar')
  })
})
