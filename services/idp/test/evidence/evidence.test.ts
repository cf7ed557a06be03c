import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, testEnv } from '@svc/kit/testing'
import { marked } from 'marked'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://partner.example.com/callback'

describe('account evidence as Markdown, in English, Arabic or both', () => {
  let service: RunningService<IdpConfig>
  let did: string
  let commitment: string
  const jar = new CookieJar()

  before(async () => {
    service = await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    const console = await registerClient(service, { redirect_uris: [CALLBACK] })
    const first = await browser(service, console.config, CALLBACK, { jar }).signIn()
    did = (await oidc.fetchUserInfo(console.config, first.access_token, first.claims()!.sub)).did as string
    const partner = await registerClient(service, {
      client_name: 'Partner',
      first_party: false,
      redirect_uris: [CALLBACK],
    })
    const tokens = await browser(service, partner.config, CALLBACK, {
      jar,
      consent: { decision: 'approve', scopes: ['email'] },
    }).signIn({ scope: 'openid email' })
    commitment = (
      (await oidc.tokenIntrospection(partner.config, tokens.access_token)).consent as { commitment: string }
    ).commitment
  })
  after(async () => service.close())

  const evidence = (lang: string, who = did, cookies = jar) =>
    cookies.fetch(`${service.url}/ui/activity/evidence/${who}.md?lang=${lang}`, { redirect: 'manual' })

  it('lists the account’s activity and consents with their ledger commitments', async () => {
    const res = await evidence('en')
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type')!, /^text\/markdown; charset=utf-8/)
    const text = await res.text()
    assert.match(text, /^# Account evidence/)
    assert.ok(text.includes(`\`${did}\``))
    assert.match(text, /\| Partner \| `openid email` \| [^|]+ \| `[^`]+` \|/)
    assert.ok(text.includes(commitment), 'the consent’s ledger commitment')
    // a CommonMark + GFM parser reads it as tables
    const html = await marked.parse(text)
    assert.match(html, /<th>Ledger commitment<\/th>/)
    assert.match(html, /<td><code>login<\/code><\/td>/)
  })

  it('writes Arabic right to left, with dates and hashes kept left to right', async () => {
    const text = await (await evidence('ar')).text()
    const html = await marked.parse(text)
    assert.match(html, /^<div dir="rtl" lang="ar">/)
    assert.match(html, /<h1>سجل أدلة الحساب<\/h1>/)
    assert.match(html, /<th>التزام السجل<\/th>/)
    assert.ok(html.includes('\u2068'), 'left-to-right values are isolated')
    const both = await (await evidence('both')).text()
    assert.ok(both.startsWith('# Account evidence'))
    assert.ok(both.includes('<div dir="rtl" lang="ar">'))
  })

  it('is the signed-in account’s own: another DID is not found, and no session means sign in', async () => {
    assert.equal(
      (await evidence('en', 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK')).status,
      404,
    )
    const anonymous = await evidence('en', did, new CookieJar())
    assert.equal(anonymous.status, 303)
    // no session comes before a bad query: sign in first (issue 16, finding 6)
    const anonymousBadLang = await evidence('1e309', did, new CookieJar())
    assert.equal(anonymousBadLang.status, 303)
    assert.match(anonymousBadLang.headers.get('location')!, /^\/ui\/login\?return_to=/)
    assert.equal((await evidence('fr')).status, 400)
  })
})
