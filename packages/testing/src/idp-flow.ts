import type { RunningService } from '@svc/kit'
import { CookieJar, request } from '@svc/kit/testing'
import * as oidc from 'openid-client'
import { DEMO_EMAIL } from '../../../services/idp/src/areas/accounts/index.ts'
import type { IdpConfig } from '../../../services/idp/src/config.ts'

export const ADMIN = 'test-admin-token-0123456789'
/** The CSRF token a page's form carries. */
export const csrfOf = (page: string) => /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? ''

/** Registers a client with the management API (first-party and confidential unless told otherwise). */
export const createClient = (service: RunningService<IdpConfig>, metadata: Record<string, unknown>) =>
  request(`${service.url}/manage/v1/clients`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Console',
      client_type: 'confidential',
      first_party: true,
      ...metadata,
    }),
  })

/** Registers a first-party confidential client and discovers the issuer with openid-client. */
export async function registerClient(service: RunningService<IdpConfig>, metadata: Record<string, unknown>) {
  const created = await createClient(service, metadata)
  const clientId = created.body.client_id as string
  const secret = created.body.client_secret as string
  // the client authenticates as it registered, with Basic (openid-client defaults to the body, also accepted)
  const config = await oidc.discovery(
    new URL(service.url),
    clientId,
    secret,
    oidc.ClientSecretBasic(secret),
    {
      execute: [oidc.allowInsecureRequests],
    },
  )
  return { clientId, secret, webhookSecret: created.body.webhook_secret as string, config }
}

/** Fills in the hosted sign-in page as its user would (the demo account by default); returns where it leads. */
export async function signInOnPage(
  service: RunningService<IdpConfig>,
  jar: CookieJar,
  page: string,
  account: { email?: string; password?: string } = {},
) {
  const signIn = await jar.fetch(`${service.url}/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      email: account.email ?? DEMO_EMAIL,
      password: account.password ?? service.ctx.config.demoPassword,
      csrf: csrfOf(page),
      return_to: /name="return_to" value="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&'),
    }).toString(),
  })
  return signIn.headers.get('location')!
}

/** A browser for the code flow: through the hosted sign-in page until the redirect back to the client. */
export interface ConsentAnswer {
  decision: 'approve' | 'deny'
  /** The scopes left checked (openid is always granted). */
  scopes?: string[]
}

export function browser(
  service: RunningService<IdpConfig>,
  config: oidc.Configuration,
  callback: string,
  options: {
    jar?: CookieJar
    consent?: ConsentAnswer
    email?: string
    password?: string
    totp?: () => string
  } = {},
) {
  const jar = options.jar ?? new CookieJar()
  const consents: string[] = []

  async function browse(url: string): Promise<string> {
    let location = url
    for (let hop = 0; hop < 8; hop++) {
      const res = await jar.fetch(new URL(location, service.url).toString())
      if (res.status === 200 && location.startsWith('/ui/login')) {
        location = await signInOnPage(service, jar, await res.text(), options)
        continue
      }
      if (res.status === 200 && location.startsWith('/ui/mfa')) {
        if (!options.totp) throw new Error('a second factor was asked for and the test has none')
        const page = await res.text()
        const answered = await jar.fetch(`${service.url}/ui/mfa`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf: csrfOf(page), code: options.totp() }).toString(),
        })
        location = answered.headers.get('location')!
        continue
      }
      if (res.status === 200 && location.startsWith('/ui/consent')) {
        const page = await res.text()
        consents.push(page)
        if (!options.consent) throw new Error('a consent page was shown and the test gave no answer')
        const form = new URLSearchParams({
          csrf: csrfOf(page),
          return_to: /name="return_to" value="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&'),
          decision: options.consent.decision,
        })
        for (const scope of options.consent.scopes ?? []) form.append('scope', scope)
        const answered = await jar.fetch(`${service.url}/ui/consent`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        })
        location = answered.headers.get('location')!
        if (location.startsWith(callback)) return location
        continue
      }
      const next = res.headers.get('location')
      if (!next) throw new Error(`${location} answered ${res.status}: ${await res.text()}`)
      if (next.startsWith(callback)) return next
      location = next
    }
    throw new Error('too many redirects')
  }

  async function start(extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier()
    const state = oidc.randomState()
    const nonce = oidc.randomNonce()
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: callback,
      scope: 'openid email profile',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...extra,
    })
    return { verifier, state, nonce, url: url.toString() }
  }

  /** The whole flow: sign in, come back, exchange the code; the library validates everything. */
  async function signIn(extra: Record<string, string> = {}) {
    const flow = await start(extra)
    const callbackUrl = new URL(await browse(flow.url))
    return oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
    })
  }

  return { jar, browse, start, signIn, consents }
}
