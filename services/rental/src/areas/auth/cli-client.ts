/** The command line's client at the idp: public, first-party, known by this name. */
export const CLI_CLIENT_ID = 'svc-cli'
const CLI_CLIENT_NAME = 'svc command line'
/** RFC 8252 §7.3: a loopback redirect (any port), which the idp's registration requires; the CLI uses the device grant. */
const CLI_REDIRECT_URI = 'http://127.0.0.1/callback'
export const RESOURCE_NAME = 'svc rental API'

async function call(
  issuer: string,
  adminToken: string,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${issuer}/manage/v1${path}`, {
    method,
    headers: {
      'x-admin-token': adminToken,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  })
  await res.arrayBuffer()
  return res.status
}

/**
 * With the idp's admin token, at each link: this service registered as a protected resource
 * (RFC 8707; identifier its base URL, so the idp puts that in `aud`) and the command line's public
 * client `svc-cli` (token_endpoint_auth_method none, first-party, for the device grant and
 * refresh tokens). Both answer 409 once they exist; anything else is an error naming the call.
 */
export async function registerCliAccess(issuer: string, adminToken: string, resource: string) {
  const made = await call(issuer, adminToken, 'POST', '/resources', {
    identifier: resource,
    name: RESOURCE_NAME,
  })
  if (made !== 201 && made !== 409)
    throw new Error(`the idp answered ${made} to the registration of the resource ${resource}`)
  if ((await call(issuer, adminToken, 'GET', `/clients/${CLI_CLIENT_ID}`)) === 200) return
  const created = await call(issuer, adminToken, 'POST', '/clients', {
    client_id: CLI_CLIENT_ID,
    client_name: CLI_CLIENT_NAME,
    client_type: 'public',
    first_party: true,
    token_endpoint_auth_method: 'none',
    redirect_uris: [CLI_REDIRECT_URI],
  })
  if (created !== 201 && created !== 409)
    throw new Error(`the idp answered ${created} to the registration of the client ${CLI_CLIENT_ID}`)
}
