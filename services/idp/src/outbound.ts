import {
  checkPublicUrl,
  getFromPublicUrl,
  type PostOutcome,
  postToPublicUrl,
  PublicUrlError,
  publicAgent,
} from '@svc/kit/http/public-fetch'
import { idpError } from './errors.ts'

/**
 * One dispatcher per setting: connections resolve their host themselves and refuse a private (or,
 * with private allowed, a cloud metadata) answer, so the address checked is the one connected to.
 */
const agents = { public: publicAgent({ allowPrivate: false }), private: publicAgent({ allowPrivate: true }) }
const agentFor = (allowPrivate: boolean) => (allowPrivate ? agents.private : agents.public)

/**
 * Checks a URL a caller gives for the idp to deliver to or fetch later (lifecycle webhook, SSF push
 * endpoint, logout URIs): the kit's guard (https, no credentials, a public address after DNS; with
 * IDP_FETCH_ALLOW_PRIVATE http and private addresses too, never a cloud metadata one), and no
 * fragment. A refusal is a 400 with `code` naming the field and why.
 */
export async function checkCallerUrl(
  url: string,
  what: string,
  options: { allowPrivate: boolean; code?: 'invalid_client_metadata' | 'invalid_request' },
): Promise<void> {
  const code = options.code ?? 'invalid_client_metadata'
  let target: URL
  try {
    target = await checkPublicUrl(url, { allowPrivate: options.allowPrivate })
  } catch (err) {
    if (!(err instanceof PublicUrlError)) throw err
    throw idpError(code, `${what} ${JSON.stringify(url)} ${err.message}`)
  }
  if (target.hash || url.includes('#')) throw idpError(code, `${what} must not have a fragment`)
}

/**
 * POSTs to a URL a caller registered, through the kit's guard again at delivery (its address
 * checked and pinned for the connection): no redirects (a 3xx fails the attempt, as OpenID
 * Back-Channel Logout §2.7 asks of logout requests), bounded in time. Never throws.
 */
export function postToCaller(
  url: string,
  init: { body: string; headers: Record<string, string>; allowPrivate: boolean; timeoutMs?: number },
): Promise<PostOutcome> {
  return postToPublicUrl(url, { ...init, agent: agentFor(init.allowPrivate) })
}

/**
 * Fetches a URL a caller named (a JWKS, a domain's owner document): https only, to public
 * addresses only (checked, then pinned for the connection: the kit's public-fetch), with a
 * timeout, a size cap and no redirects, unless `allowPrivate` (tests and development against local
 * servers: IDP_FETCH_ALLOW_PRIVATE). A refusal or a failure is a 400 naming what went wrong.
 */
export async function fetchPublic(
  url: string,
  {
    allowPrivate,
    timeoutMs = 5000,
    maxBytes = 256 * 1024,
  }: { allowPrivate: boolean; timeoutMs?: number; maxBytes?: number },
): Promise<unknown> {
  let answer: { status: number; text: string }
  try {
    answer = await getFromPublicUrl(url, { agent: agentFor(allowPrivate), allowPrivate, timeoutMs, maxBytes })
  } catch (err) {
    const message = (err as Error).message
    if (err instanceof PublicUrlError && message === 'is not an absolute URL')
      throw idpError('invalid_request', `${url} is not a URL`)
    throw idpError('invalid_request', `${url} ${message}`)
  }
  if (answer.status < 200 || answer.status >= 300)
    throw idpError('invalid_request', `${url} answered ${answer.status}`)
  try {
    return JSON.parse(answer.text) as unknown
  } catch {
    throw idpError('invalid_request', `${url} did not answer JSON`)
  }
}
