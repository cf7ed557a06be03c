import { randomBytes } from 'node:crypto'
import type { IdpDb } from '../../db.ts'
import { parseScope } from '../../oauth/scopes.ts'
import { insertPushed, livePushed, usePushed } from './store.ts'

export const PAR_TTL_S = 90
const URN = 'urn:ietf:params:oauth:request_uri:'

export async function pushRequest(db: IdpDb, clientId: string, params: Record<string, string>) {
  const uri = `${URN}${randomBytes(32).toString('base64url')}`
  await insertPushed(db, {
    uri,
    client_id: clientId,
    params: { ...params, client_id: clientId },
    expires_at: new Date(Date.now() + PAR_TTL_S * 1000),
  })
  return { request_uri: uri, expires_in: PAR_TTL_S }
}

/**
 * RFC 9126 §4: the pushed parameters stand in for the query, whose other parameters are ignored.
 * The one exception is a `prompt` that only drops pushed values: the idp's own way back from its
 * sign-in and consent pages, which must not ask again what was just done.
 */
export async function expandPushed(
  db: IdpDb,
  query: { client_id?: string; request_uri?: string; prompt?: string },
): Promise<Record<string, string> | undefined> {
  if (!query.client_id || !query.request_uri) return undefined
  const row = await livePushed(db, query.request_uri, query.client_id)
  if (!row) return undefined
  const params: Record<string, string> = { ...row.params, request_uri: query.request_uri }
  if (query.prompt !== undefined) {
    const pushed = parseScope(params.prompt)
    if (parseScope(query.prompt).every((p) => pushed.includes(p))) params.prompt = query.prompt
  }
  return params
}

/** What other areas may ask of pushed requests (in the caller's db or transaction). */
export const parService = {
  /** The pushed parameters standing in for an authorization request's query, or undefined. */
  expand: expandPushed,
  /** Spends a pushed request_uri once: false when it was already used or has expired. */
  use: usePushed,
}
