import { AppError } from '@svc/kit'

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

const invalid = (code: string, message: string) => new AppError(400, code, message)

function parse(uri: string, what: string, code: string): URL {
  try {
    return new URL(uri)
  } catch {
    throw invalid(code, `${what} ${JSON.stringify(uri)} is not an absolute URI`)
  }
}

/**
 * Redirect URIs are matched exactly later, so they are checked strictly now: absolute, no fragment
 * (RFC 6749 §3.1.2); https, or http on a loopback host, or for a public (native) client a
 * private-use scheme in reverse-domain form (RFC 8252 §7.1, §7.3).
 */
export function checkRedirectUri(
  uri: string,
  publicClient: boolean,
  what = 'redirect_uri',
  code = 'invalid_redirect_uri',
) {
  const url = parse(uri, what, code)
  if (url.hash || uri.includes('#'))
    throw invalid(code, `${what} ${JSON.stringify(uri)} must not have a fragment`)
  if (url.protocol === 'https:') return
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname)) return
  if (publicClient && /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return
  throw invalid(
    code,
    `${what} ${JSON.stringify(uri)} must be https, http on a loopback address, or (public clients) a reverse-domain private-use scheme`,
  )
}

/** An origin as browsers send it: scheme, host and port, nothing more. */
export function checkOrigin(origin: string) {
  const url = parse(origin, 'allowed_origins entry', 'invalid_client_metadata')
  if (!['https:', 'http:'].includes(url.protocol) || url.origin !== origin)
    throw invalid(
      'invalid_client_metadata',
      `allowed_origins entry ${JSON.stringify(origin)} must be an origin like https://app.example.com`,
    )
}

/**
 * RFC 7591 §2 `client_uri`: a page a person's browser opens (never fetched by the idp), so https,
 * or http in development (`allowHttp`); absolute, without credentials or a fragment.
 */
export function checkClientUri(uri: string, allowHttp: boolean) {
  const url = parse(uri, 'client_uri', 'invalid_client_metadata')
  const scheme = url.protocol === 'https:' || (allowHttp && url.protocol === 'http:')
  if (!scheme || url.username || url.password || url.hash || uri.includes('#'))
    throw invalid(
      'invalid_client_metadata',
      `client_uri ${JSON.stringify(uri)} must be an https URL${allowHttp ? ' (or http in development)' : ''}, without credentials or a fragment`,
    )
}
