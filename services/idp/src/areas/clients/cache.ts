import type { Selectable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'
import { clientRow } from './store.ts'

type ClientRow = Readonly<Selectable<IdpTables['clients']>>

/**
 * How long a row is kept: another instance's change to a client (a rotated secret) is seen here
 * within this time; this instance's own changes at once, through forgetClients.
 */
export const CLIENT_CACHE_MS = 5_000
const MAX_ENTRIES = 10_000

// one cache a database handle, so that several apps in one process (tests) never share rows
const caches = new WeakMap<IdpDb, Map<string, { row: ClientRow; epoch: number; until: number }>>()
let epoch = 0

/**
 * The client row that client authentication reads on every request, kept a few seconds (`fresh`
 * reads it again). Only rows that exist are kept; the secret stays a hash, checked by the caller
 * on every request.
 */
export async function cachedClientRow(
  db: IdpDb,
  clientId: string,
  options: { fresh?: boolean } = {},
): Promise<ClientRow | undefined> {
  let cache = caches.get(db)
  if (!cache) caches.set(db, (cache = new Map()))
  const hit = cache.get(clientId)
  if (hit && hit.epoch === epoch && hit.until > Date.now() && !options.fresh) return hit.row
  // a change that commits while the row is read leaves the epoch moved, and the row unkept
  const readAt = epoch
  const row = Object.freeze(await clientRow(db, clientId))
  if (!row) {
    cache.delete(clientId)
    return undefined
  }
  if (readAt === epoch) {
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!)
    cache.set(clientId, { row, epoch, until: Date.now() + CLIENT_CACHE_MS })
  }
  return row
}

/** Every kept row is stale: call after any write to a client row commits. */
export function forgetClients() {
  epoch++
}
