import { decodeJwt } from 'jose'

const PUSHED = 'urn:ietf:params:oauth:request_uri:'

/**
 * Request objects are not supported (discovery: `request_parameter_supported` and
 * `request_uri_parameter_supported` false), and a `request_uri` is only one the PAR endpoint
 * issued. Anything else is refused by its own code (OpenID Connect Core §3.1.2.6), never ignored.
 * `where`: the client, redirect URI and state the query or the (unverified) request object names,
 * only to find where to send the error: the redirect URI must still be one registered for the client.
 */
export function unsupportedRequest(query: { request?: string; request_uri?: string }): {
  error: 'request_not_supported' | 'request_uri_not_supported'
  description: string
  where: { client_id?: string; redirect_uri?: string; state?: string }
} | null {
  if (query.request !== undefined)
    return {
      error: 'request_not_supported',
      description:
        'request objects are not supported (request_parameter_supported is false): send the parameters in the query, or push them (PAR)',
      where: namedIn(query.request),
    }
  if (query.request_uri !== undefined && !query.request_uri.startsWith(PUSHED))
    return {
      error: 'request_uri_not_supported',
      description: 'only a request_uri from the pushed authorization request endpoint (/par) is accepted',
      where: {},
    }
  return null
}

function namedIn(jwt: string) {
  try {
    const claims = decodeJwt(jwt)
    const text = (value: unknown) => (typeof value === 'string' && value.length <= 2000 ? value : undefined)
    return {
      client_id: text(claims.client_id),
      redirect_uri: text(claims.redirect_uri),
      state: text(claims.state),
    }
  } catch {
    return {}
  }
}
