import { randomUUID } from 'node:crypto'
import type { CookieJar } from '@svc/kit/testing'
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose'
import { csrfOf } from '@svc/testing/idp-flow'
import { CLI_CLIENT_ID } from '../../src/areas/auth/index.ts'

const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'

/** A DPoP key of the command line's (RFC 9449): ES256, with its public JWK and thumbprint. */
export interface DpopKey {
  privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey']
  jwk: JWK
  jkt: string
}

export async function dpopKey(): Promise<DpopKey> {
  const { publicKey, privateKey } = await generateKeyPair('ES256')
  const jwk = await exportJWK(publicKey)
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk, 'sha256') }
}

/** An RFC 9449 proof for one request; `claims` add to or override `htm`, `htu`, `jti`, `iat`. */
export function dpopProof(key: DpopKey, htm: string, htu: string, claims: Record<string, unknown> = {}) {
  return new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk })
    .sign(key.privateKey)
}

const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  })

/**
 * The command line's sign-in as `svc-cli` (RFC 8628): the device asks, the person signed in at
 * the idp in `jar` allows at `/device`, the device gets its tokens (DPoP-bound with `dpop`, the
 * idp's nonce taken on the second try). The token is for `resource` (the rental's URL), or for
 * the client itself when `resource` is null. Throws with the idp's answer when a step fails.
 */
export async function deviceGrant(
  urls: { idp: string; rental: string },
  jar: CookieJar,
  options: {
    resource?: string | null
    dpop?: DpopKey
    scope?: string
    /** Who signs in at the idp's page first, when `jar` is not signed in there yet. */
    account?: { email: string; password: string }
  } = {},
): Promise<Record<string, string>> {
  const resource = options.resource === undefined ? urls.rental : options.resource
  const started = await form(`${urls.idp}/device_authorization`, {
    client_id: CLI_CLIENT_ID,
    scope: options.scope ?? 'openid offline_access',
    ...(resource ? { resource } : {}),
  })
  const codes = (await started.json()) as Record<string, string>
  if (started.status !== 200) throw new Error(`device_authorization: ${JSON.stringify(codes)}`)
  let page = await jar.fetch(codes.verification_uri_complete!)
  if (options.account && page.status >= 300 && page.status < 400) {
    const login = await (await jar.fetch(new URL(page.headers.get('location')!, urls.idp).href)).text()
    await jar.fetch(`${urls.idp}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...options.account,
        csrf: csrfOf(login),
        return_to: /name="return_to" value="([^"]+)"/.exec(login)![1]!.replaceAll('&amp;', '&'),
      }).toString(),
    })
    page = await jar.fetch(codes.verification_uri_complete!)
  }
  const text = await page.text()
  if (page.status !== 200) throw new Error(`/device answered ${page.status}: ${text.slice(0, 300)}`)
  const answered = await jar.fetch(`${urls.idp}/device`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: csrfOf(text), user_code: codes.user_code!, decision: 'approve' }),
  })
  if (answered.status !== 200) throw new Error(`approving the device answered ${answered.status}`)
  const fields = { grant_type: DEVICE_CODE, device_code: codes.device_code!, client_id: CLI_CLIENT_ID }
  const htu = `${urls.idp}/token`
  const key = options.dpop
  let res = await form(htu, fields, key ? { dpop: await dpopProof(key, 'POST', htu) } : {})
  const nonce = res.headers.get('dpop-nonce')
  if (res.status === 400 && key && nonce)
    res = await form(htu, fields, { dpop: await dpopProof(key, 'POST', htu, { nonce }) })
  const tokens = (await res.json()) as Record<string, string>
  if (res.status !== 200) throw new Error(`/token answered ${res.status}: ${JSON.stringify(tokens)}`)
  return tokens
}
