import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { CookieJar } from '@svc/kit/testing'
import { wellFormed } from '@svc/kit/testing/sweep/auth'
import { fetchOperations } from '@svc/kit/testing/sweep/operations'
import { decodeJwt } from 'jose'
import { Secret, TOTP } from 'otpauth'
import { csrfOf } from '@svc/testing/idp-flow'
import { CLI_CLIENT_ID } from '../../src/areas/auth/index.ts'
import { deviceGrant as grant, dpopKey, dpopProof as proof } from '../support/device-grant.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

const MAX_AGE_S = 300
const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const ath = (token: string) => createHash('sha256').update(token).digest('base64url')

describe('rental: the idp’s access tokens on the signed-in routes (Bearer and DPoP)', () => {
  let s: FullStack
  let offset = 0
  let token = ''
  let carol: Client

  const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    })

  const deviceGrant = (jar: CookieJar, options: Parameters<typeof grant>[2] = {}) =>
    grant({ idp: s.idp.url, rental: s.rental.url }, jar, options)

  /** A call to the rental with only these headers (no cookie, no CSRF token). */
  async function api(method: string, path: string, headers: Record<string, string>, body?: unknown) {
    const res = await fetch(`${s.rental.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: 'manual',
    })
    const text = await res.text()
    let parsed: Record<string, unknown> = {}
    try {
      parsed = JSON.parse(text) as Record<string, unknown>
    } catch {}
    return { status: res.status, headers: res.headers, text, body: parsed }
  }
  const bearer = (value: string) => ({ authorization: `Bearer ${value}` })

  /** Asks until the rental refuses the token (up to 8 s); how long it took, in ms. */
  async function refusedWithin(value: string): Promise<number> {
    const from = Date.now()
    let status = 200
    while (status === 200 && Date.now() - from < 8_000) {
      status = (await api('GET', '/api/me', bearer(value))).status
      if (status === 200) await new Promise((r) => setTimeout(r, 250))
    }
    assert.equal(status, 401, 'refused once the idp no longer vouches for the token')
    return Date.now() - from
  }

  /** A form post in the idp's pages, as the browser in `jar`. */
  const idpForm = (jar: CookieJar, path: string, fields: Record<string, string>) =>
    jar.fetch(`${s.idp.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.idp.url },
      body: new URLSearchParams(fields).toString(),
    })

  before(async () => {
    s = await startFullStack(
      {
        RENTAL_STEP_UP: 'true',
        RENTAL_STEP_UP_MAX_AGE_S: String(MAX_AGE_S),
        RENTAL_STEP_UP_RELEASE_FILS: '0',
        RENTAL_OPERATORS: 'ops@bearer.example',
      },
      { now: () => new Date(Date.now() + offset), idpEnv: { IDP_USER_CODE_RATE_PER_MIN: '0' } },
    )
    carol = await s.signInWith('carol@bearer.example')
    token = (await deviceGrant(s.alice.jar)).access_token!
  })
  after(async () => s?.close())

  it('issues svc-cli tokens for the rental: aud the rental, the person’s acr and auth_time carried', () => {
    const claims = decodeJwt(token)
    assert.equal(claims.aud, s.rental.url)
    assert.equal(claims.client_id, CLI_CLIENT_ID)
    assert.equal(claims.sub, s.alice.me.client.subject)
    assert.equal(typeof claims.acr, 'string')
    assert.equal(typeof claims.auth_time, 'number')
  })

  it('takes the token on every signed-in route (/api and /v1) as the session would, with no CSRF token; the OpenAPI security offers it', async (t) => {
    const { operations } = await fetchOperations(s.rental.url, 'rental')
    const signedIn = operations.filter((op) => ['S', 'S+C', 'tenant'].includes(op.auth))
    assert.ok(signedIn.length > 100, `${signedIn.length} signed-in operations`)
    const failures: string[] = []
    for (const op of signedIn.filter((o) => o.path !== '/auth/logout')) {
      if (!op.security.some((set) => set.includes('idpAccessToken')))
        failures.push(`${op.method} ${op.path}: its security does not offer idpAccessToken`)
      const req = wellFormed(op, s.rental.url)
      const res = await fetch(req.url, {
        method: op.method,
        headers: { accept: 'application/json', ...req.headers, ...bearer(token) },
        body: req.body,
        redirect: 'manual',
      })
      const text = await res.text()
      // authenticated: anything but 401, except the step-up this stack asks of sensitive routes
      const stepUp = res.status === 401 && text.includes('"step_up_required"')
      if ((res.status === 401 && !stepUp) || text.includes('"csrf_failed"') || res.status >= 500)
        failures.push(`${op.method} ${op.path}: ${res.status} ${text.slice(0, 200)}`)
      if (res.status === 403 && text.includes('"forbidden"')) {
        // only what the owner's session is refused too (the operators' own routes)
        const session = await s.alice.jar.fetch(req.url, {
          method: op.method,
          headers: { accept: 'application/json', 'x-csrf-token': s.alice.csrf, ...req.headers },
          body: req.body,
        })
        if (session.status !== 403)
          failures.push(`${op.method} ${op.path}: 403 with the token, ${session.status} with the session`)
      }
    }
    t.diagnostic(`${signedIn.length} signed-in operations called with the token`)
    assert.deepEqual(failures, [])
  })

  it('gives svc-cli a refresh token whose next access tokens are for the rental too', async () => {
    const tokens = await deviceGrant(s.alice.jar)
    assert.ok(tokens.refresh_token, 'offline_access gives a refresh token')
    const refreshed = await form(`${s.idp.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: CLI_CLIENT_ID,
    })
    const next = (await refreshed.json()) as Record<string, string>
    assert.equal(refreshed.status, 200, JSON.stringify(next))
    assert.equal(decodeJwt(next.access_token!).aud, s.rental.url)
    assert.equal((await api('GET', '/api/me', bearer(next.access_token!))).status, 200)
  })

  it('acts as the person’s organization: /api/me, and a write without a CSRF token', async () => {
    const me = await api('GET', '/api/me', bearer(token))
    assert.equal(me.status, 200, me.text)
    const org = me.body.organization as { id: string; role: string }
    assert.equal(org.id, s.alice.me.organization.id)
    assert.equal(org.role, 'owner')
    const hook = await api('POST', '/api/org/members', bearer(token), {
      email: 'dan@bearer.example',
      role: 'viewer',
    })
    assert.equal(hook.status, 201, hook.text)
    // the session still needs its CSRF token
    const session = await s.call(
      s.alice,
      'POST',
      '/api/org/members',
      { email: 'erin@bearer.example', role: 'viewer' },
      { csrf: false },
    )
    assert.equal(session.status, 403)
    assert.equal(codeOf(session), 'csrf_failed')
  })

  it('refuses a token for another audience 401 with WWW-Authenticate: Bearer error="invalid_token"', async () => {
    const other = (await deviceGrant(s.alice.jar, { resource: null })).access_token!
    assert.equal(decodeJwt(other).aud, CLI_CLIENT_ID)
    const res = await api('GET', '/api/me', bearer(other))
    assert.equal(res.status, 401, res.text)
    assert.equal(codeOf(res), 'unauthenticated')
    assert.match(
      res.headers.get('www-authenticate')!,
      /^Bearer error="invalid_token", error_description="[^"]*audience/,
    )
    // RFC 9728: the challenge names the rental's metadata, which names the idp and svc-cli
    const metadataUrl = `${s.rental.url}/.well-known/oauth-protected-resource`
    assert.match(res.headers.get('www-authenticate')!, new RegExp(`resource_metadata="${metadataUrl}"`))
    const none = await api('GET', '/api/me', {})
    assert.equal(none.status, 401)
    assert.equal(
      none.headers.get('www-authenticate'),
      `Bearer resource_metadata="${metadataUrl}", DPoP resource_metadata="${metadataUrl}", algs="ES256 EdDSA RS256 PS256"`,
    )
    const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>
    assert.equal(metadata.resource, s.rental.url)
    assert.deepEqual(metadata.authorization_servers, [s.idp.url])
    assert.equal(metadata.svc_cli_client_id, CLI_CLIENT_ID)
    for (const junk of ['not-a-jwt', `${token.slice(0, -4)}AAAA`]) {
      const bad = await api('GET', '/api/me', bearer(junk))
      assert.equal(bad.status, 401, bad.text)
      assert.match(bad.headers.get('www-authenticate')!, /^Bearer error="invalid_token"/)
    }
  })

  it('keeps organizations apart: another organization’s token gets 404 for alice’s engagement', async () => {
    const id = await s.hireAndSign(s.alice, 'job_summary', await s.agentOf('job_summary'), s.newClientKey())
    const carolToken = (await deviceGrant(carol.jar)).access_token!
    const mine = await api('GET', '/api/me', bearer(carolToken))
    assert.equal((mine.body.organization as { id: string }).id, carol.me.organization.id)
    assert.equal((await api('GET', `/api/engagements/${id}`, bearer(token))).status, 200)
    const theirs = await api('GET', `/api/engagements/${id}`, bearer(carolToken))
    assert.equal(theirs.status, 404, theirs.text)
    const task = await api('POST', '/api/tasks', bearer(carolToken), { engagement_id: id, text: 'One. Two.' })
    assert.equal(task.status, 404, task.text)
  })

  it('answers a sensitive route RFC 9470 style on a token without a recent second factor', async () => {
    const res = await api('POST', '/api/tokens', bearer(token), { label: 'needs mfa' })
    assert.equal(res.status, 401, res.text)
    assert.equal(codeOf(res), 'step_up_required')
    assert.match(
      res.headers.get('www-authenticate')!,
      /^Bearer error="insufficient_user_authentication", .*acr_values="urn:svc:mfa", max_age="300"/,
    )
  })

  it('honours DPoP-bound tokens: with a proof it works; without one, replayed, for another URL or key it is 401 DPoP', async () => {
    const key = await dpopKey()
    const tokens = await deviceGrant(s.alice.jar, { dpop: key })
    assert.equal(tokens.token_type, 'DPoP')
    const bound = tokens.access_token!
    assert.equal((decodeJwt(bound).cnf as { jkt: string }).jkt, key.jkt)
    const htu = `${s.rental.url}/api/me`
    const dpop = (extra: Record<string, unknown> = {}, signer = key) =>
      proof(signer, 'GET', htu, { ath: ath(bound), ...extra })
    const good = await dpop()
    const ok = await api('GET', '/api/me', { authorization: `DPoP ${bound}`, dpop: good })
    assert.equal(ok.status, 200, ok.text)
    const refusals: Array<[string, Record<string, string>, RegExp]> = [
      ['replayed', { authorization: `DPoP ${bound}`, dpop: good }, /invalid_dpop_proof.*replayed/],
      ['no proof', { authorization: `DPoP ${bound}` }, /invalid_dpop_proof/],
      ['as Bearer', { authorization: `Bearer ${bound}`, dpop: await dpop() }, /invalid_token/],
      [
        'another URL',
        {
          authorization: `DPoP ${bound}`,
          dpop: await proof(key, 'GET', `${s.rental.url}/api/org`, { ath: ath(bound) }),
        },
        /htu/,
      ],
      [
        'another method',
        { authorization: `DPoP ${bound}`, dpop: await proof(key, 'POST', htu, { ath: ath(bound) }) },
        /htm/,
      ],
      ['another token', { authorization: `DPoP ${bound}`, dpop: await dpop({ ath: ath(token) }) }, /ath/],
      [
        'old',
        { authorization: `DPoP ${bound}`, dpop: await dpop({ iat: Math.floor(Date.now() / 1000) - 300 }) },
        /iat/,
      ],
      [
        'another key',
        { authorization: `DPoP ${bound}`, dpop: await dpop({}, await dpopKey()) },
        /another key/,
      ],
    ]
    for (const [what, headers, message] of refusals) {
      const res = await api('GET', '/api/me', headers)
      assert.equal(res.status, 401, `${what}: ${res.text}`)
      const challenge = res.headers.get('www-authenticate')!
      assert.match(challenge, /^(DPoP|Bearer) error="/, what)
      assert.match(`${challenge} ${res.text}`, message, what)
      if (what !== 'as Bearer') assert.match(challenge, /^DPoP .*algs="/, what)
    }
  })

  it('takes the token over the cookie when a request has both (the cookie is ignored)', async () => {
    const res = await carol.jar.fetch(`${s.rental.url}/api/me`, { headers: bearer(token) })
    const me = (await res.json()) as { organization: { id: string } }
    assert.equal(me.organization.id, s.alice.me.organization.id)
    const other = (await deviceGrant(s.alice.jar, { resource: null })).access_token!
    const refused = await s.alice.jar.fetch(`${s.rental.url}/api/me`, { headers: bearer(other) })
    assert.equal(refused.status, 401, 'a bad token is not saved by a good cookie')
  })

  it('refuses a token whose person never signed in to the console (no organization to act for) 403', async () => {
    const jar = (await s.signInWith('frank@bearer.example')).jar
    const frank = (await deviceGrant(jar)).access_token!
    const ok = await api('GET', '/api/me', bearer(frank))
    assert.equal(ok.status, 200, 'frank signed in to the console: his organization')
    // a person of the idp the rental never saw: made without the console
    await s.db
      .deleteFrom('org_members')
      .where('subject', '=', String(decodeJwt(frank).sub))
      .execute()
    const unknown = await api('GET', '/api/me', bearer(frank))
    assert.equal(unknown.status, 403, unknown.text)
    assert.match(unknown.text, /sign in to the console once/)
  })

  it('provisions a person at their first token as their first console sign-in would: an organization, or the invitation to their verified email', async () => {
    const email = 'grace@bearer.example'
    const tokens = await deviceGrant(new CookieJar(), {
      account: await s.idpUser(email),
      scope: 'openid email offline_access',
    })
    const me = await api('GET', '/api/me', bearer(tokens.access_token!))
    assert.equal(me.status, 200, me.text)
    const who = me.body as { client: { email: string }; organization: { id: string; role: string } }
    assert.equal(who.client.email, email)
    assert.equal(who.organization.role, 'owner', 'a new organization, hers')
    const wallet = await api('GET', '/api/wallet', bearer(tokens.access_token!))
    assert.equal(wallet.status, 200, 'and she acts for it')

    // invited by carol before she ever came: her first token takes the invitation
    const invited = 'heidi@bearer.example'
    const invitation = await s.call(carol, 'POST', '/api/org/members', { email: invited, role: 'viewer' })
    assert.equal(invitation.status, 201, invitation.text)
    const heidi = await deviceGrant(new CookieJar(), {
      account: await s.idpUser(invited),
      scope: 'openid email offline_access',
    })
    const joined = await api('GET', '/api/me', bearer(heidi.access_token!))
    assert.equal(joined.status, 200, joined.text)
    assert.equal(
      (joined.body as typeof who).organization.id,
      carol.me.organization.id,
      'in carol’s organization',
    )
    assert.equal((joined.body as typeof who).organization.role, 'viewer')

    // an email the idp never verified makes nothing: still the 403
    const ivan = await deviceGrant(new CookieJar(), {
      account: await s.idpUser('ivan@bearer.example', { verified: false }),
      scope: 'openid email offline_access',
    })
    const refused = await api('GET', '/api/me', bearer(ivan.access_token!))
    assert.equal(refused.status, 403, refused.text)
    assert.match(refused.text, /no verified email/)
  })

  it('stops a revoked token within the introspection cache (5 s), and an expired one at once', async () => {
    const tokens = await deviceGrant(s.alice.jar)
    const revoked = tokens.access_token!
    assert.equal((await api('GET', '/api/me', bearer(revoked))).status, 200)
    const answer = await form(`${s.idp.url}/revoke`, { token: revoked, client_id: CLI_CLIENT_ID })
    assert.equal(answer.status, 200)
    const took = await refusedWithin(revoked)
    assert.ok(took < 6_500, `refused after ${took} ms`)
    // eleven minutes on, past the token's 600 s
    offset = 11 * 60_000
    try {
      const expired = await api('GET', '/api/me', bearer(token))
      assert.equal(expired.status, 401, expired.text)
      assert.match(
        expired.headers.get('www-authenticate')!,
        /invalid_token", error_description="the access token has expired/,
      )
    } finally {
      offset = 0
    }
  })

  it('stops the tokens of a person who signed out at the idp within the introspection cache', async () => {
    const gina = await s.signInWith('gina@bearer.example')
    const ginas = (await deviceGrant(gina.jar)).access_token!
    assert.equal((await api('GET', '/api/me', bearer(ginas))).status, 200)
    const account = await (await gina.jar.fetch(`${s.idp.url}/ui/account`)).text()
    const out = await idpForm(gina.jar, '/ui/logout', { csrf: csrfOf(account) })
    assert.ok([200, 303].includes(out.status), `signed out: ${out.status}`)
    const took = await refusedWithin(ginas)
    assert.ok(took < 6_500, `refused after ${took} ms`)
  })

  it('lets a token from a sign-in with a second factor through a step-up route', async () => {
    const hana = await s.signInWith('hana@bearer.example')
    // a TOTP code is taken once and within one step of now: three steps used in order, in one period
    const left = 30_000 - (Date.now() % 30_000)
    if (left < 8_000) await new Promise((r) => setTimeout(r, left + 50))
    let step = -1
    const account = await (await hana.jar.fetch(`${s.idp.url}/ui/account`)).text()
    const setup = await (await idpForm(hana.jar, '/ui/account/totp', { csrf: csrfOf(account) })).text()
    const totp = new TOTP({
      issuer: 'svc',
      algorithm: 'SHA1',
      digits: 6,
      period: 30,
      secret: Secret.fromBase32(/<code data-secret>([A-Z2-7]+)<\/code>/.exec(setup)![1]!),
    })
    const nextCode = () => totp.generate({ timestamp: Date.now() + step++ * 30_000 })
    const confirmed = await idpForm(hana.jar, '/ui/account/totp/confirm', {
      csrf: csrfOf(setup),
      code: nextCode(),
    })
    assert.equal(confirmed.status, 200)
    // a fresh sign-in at the idp with the password and the code: acr urn:svc:mfa
    const jar = new CookieJar()
    const login = await (await jar.fetch(`${s.idp.url}/ui/login`)).text()
    const password = await idpForm(jar, '/ui/login', {
      email: 'hana@bearer.example',
      password: 'password-of-hana@bearer.example',
      csrf: csrfOf(login),
    })
    assert.equal(password.headers.get('location'), '/ui/mfa')
    const mfa = await (await jar.fetch(`${s.idp.url}/ui/mfa`)).text()
    assert.equal((await idpForm(jar, '/ui/mfa', { csrf: csrfOf(mfa), code: nextCode() })).status, 303)
    const strong = (await deviceGrant(jar)).access_token!
    assert.equal(decodeJwt(strong).acr, 'urn:svc:mfa')
    const made = await api('POST', '/api/tokens', bearer(strong), { label: 'made with a token' })
    assert.ok([200, 201].includes(made.status), made.text)
    // the password-only token of the same person is still refused there
    const weak = (await deviceGrant(hana.jar)).access_token!
    const refused = await api('POST', '/api/tokens', bearer(weak), { label: 'no second factor' })
    assert.equal(codeOf(refused), 'step_up_required')
    // past the window, even the strong one needs a new sign-in
    offset = (MAX_AGE_S + 5) * 1000
    try {
      const late = await api('POST', '/api/tokens', bearer(strong), { label: 'too late' })
      assert.equal(codeOf(late), 'step_up_required', late.text)
    } finally {
      offset = 0
    }
  })
})
