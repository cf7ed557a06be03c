import { rentalError } from '../../errors.ts'
import type { Actor } from '../events/index.ts'
import { type Pins, ToolServerError } from './mcp-client.ts'
import { ResourceTokenError } from './resource-tokens.ts'
import type { ConnectDeps } from './service.ts'
import type { ConnectionRow } from './store.ts'

/** How a binding authenticates: the client's API key, or a token from our idp for the server's resource. */
export type BindAuth = { type: 'api_key'; api_key: string } | { type: 'idp_resource' }

/** The body's auth: `api_key` (the first form, kept) or `auth` (either mode), exactly one of them. */
export function authOf(input: { api_key?: string | undefined; auth?: BindAuth | undefined }): BindAuth {
  if (input.api_key !== undefined && input.auth !== undefined)
    throw rentalError('invalid_request', 'body: give api_key or auth, not both')
  if (input.auth) return input.auth
  if (input.api_key !== undefined) return { type: 'api_key', api_key: input.api_key }
  throw rentalError('invalid_request', 'body: api_key or auth is required')
}

/** The server's failure as a 400 naming it (the idp's refusal of a token too). */
function asClientError(err: unknown): never {
  if (err instanceof ToolServerError || err instanceof ResourceTokenError)
    throw rentalError('tool_server_refused', err.message)
  throw err
}

/**
 * idp_resource: the server's RFC 9728 metadata (its 401's `resource_metadata`, or its well-known
 * URL), checked: its `resource` covers the URL and its `authorization_servers` include our idp;
 * then a token from the idp for that resource (client credentials, `resource=`).
 */
async function resourceToken(
  deps: ConnectDeps,
  url: string,
  pins: Pins,
  admit: (url: string) => Promise<unknown>,
) {
  // the metadata may live on another host: the engagement's egress policy must reach it too
  const metadata = await deps.servers.resourceOf(url, pins, admit)
  const issuer = deps.tokens.issuer
  if (!metadata.authorization_servers.some((s) => s.replace(/\/+$/, '') === issuer))
    throw new ToolServerError(
      `the tool server's metadata names the authorization servers ${metadata.authorization_servers.join(', ').slice(0, 300)}, not this platform's idp ${issuer}`,
    )
  return { resource: metadata.resource, token: await deps.tokens.token(metadata.resource) }
}

/**
 * The server's tools for the binding's credential, or 400 naming the server's (or the idp's) own
 * error; 403 `egress_refused` first when the engagement's egress policy does not reach the server
 * (before any connection). The connection goes to the addresses the egress check resolved.
 */
export async function reach(
  deps: ConnectDeps,
  engagementId: string,
  url: string,
  auth: BindAuth,
  actor: Actor,
) {
  const admit = (target: string) =>
    deps.egress.checkEgress(engagementId, target, { allowPrivate: deps.config.connect.allowPrivate, actor })
  const { addresses } = await admit(url)
  try {
    const checked = await deps.servers.checkUrl(url)
    const credential =
      auth.type === 'api_key'
        ? { resource: null, token: auth.api_key }
        : await resourceToken(deps, checked, addresses, admit)
    const listed = await deps.servers.listTools(checked, credential.token, addresses)
    return { url: checked, resource: credential.resource, ...listed }
  } catch (err) {
    return asClientError(err)
  }
}

/** The Bearer token a call is made with: the sealed key opened, or the idp's (cached) token. */
export async function bearerOf(deps: ConnectDeps, connection: ConnectionRow): Promise<string> {
  if (connection.auth_mode === 'api_key')
    return deps.sealer.open(connection.key_sealed!, `connection:${connection.id}`).toString('utf8')
  try {
    return await deps.tokens.token(connection.resource!)
  } catch (err) {
    if (err instanceof ResourceTokenError) throw new ToolServerError(err.message)
    throw err
  }
}
