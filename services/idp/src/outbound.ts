import { getFromPublicUrl, PublicUrlError, publicAgent } from '@svc/kit/http/public-fetch'
import { idpError } from './errors.ts'

/** One dispatcher per setting: connections resolve their host themselves and refuse a private answer. */
const agents = { public: publicAgent({ allowPrivate: false }), private: publicAgent({ allowPrivate: true }) }

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
    answer = await getFromPublicUrl(url, {
      agent: allowPrivate ? agents.private : agents.public,
      allowPrivate,
      timeoutMs,
      maxBytes,
    })
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
