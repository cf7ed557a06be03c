import { AppError } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../db.ts'
import { secretMatches } from '../areas/clients/service.ts'

const invalidClient = (message: string, basic: boolean) =>
  new AppError(401, 'invalid_client', message, basic ? { 'www-authenticate': 'Basic realm="token"' } : {})

/**
 * Client authentication at the token endpoint (RFC 6749 §2.3.1): HTTP Basic with the form-encoded
 * id and secret, or both in the body, or for public clients the client_id alone. The method used
 * must be the one the client registered; using two at once is refused.
 */
export async function authenticateClient(
  db: IdpDb,
  request: FastifyRequest,
  body: { client_id?: string; client_secret?: string },
) {
  const header = request.headers.authorization
  let clientId: string | undefined
  let secret: string | undefined
  let method: 'client_secret_basic' | 'client_secret_post' | 'none'
  if (header?.startsWith('Basic ')) {
    if (body.client_secret !== undefined)
      throw new AppError(400, 'invalid_request', 'use one client authentication method')
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
    const at = decoded.indexOf(':')
    if (at < 0) throw invalidClient('malformed Basic credentials', true)
    try {
      clientId = decodeURIComponent(decoded.slice(0, at).replace(/\+/g, ' '))
      secret = decodeURIComponent(decoded.slice(at + 1).replace(/\+/g, ' '))
    } catch {
      throw invalidClient('malformed Basic credentials', true)
    }
    if (body.client_id !== undefined && body.client_id !== clientId)
      throw new AppError(400, 'invalid_request', 'client_id differs from the authenticated client')
    method = 'client_secret_basic'
  } else if (body.client_secret !== undefined) {
    clientId = body.client_id
    secret = body.client_secret
    method = 'client_secret_post'
  } else {
    clientId = body.client_id
    method = 'none'
  }
  if (!clientId) throw invalidClient('client authentication is required', false)
  const client = await db
    .selectFrom('clients')
    .selectAll()
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  if (!client || client.token_endpoint_auth_method !== method)
    throw invalidClient('client authentication failed', method === 'client_secret_basic')
  if (method !== 'none' && !secretMatches(client.client_secret_hash, secret ?? ''))
    throw invalidClient('client authentication failed', method === 'client_secret_basic')
  return client
}
