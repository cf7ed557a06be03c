import { createHash } from 'node:crypto'
import type { IdpDb } from '../../db.ts'

/** The tables of the par area. */
export interface ParTables {
  pushed_requests: {
    uri_hash: Buffer
    client_id: string
    params: Record<string, string>
    expires_at: Date
    used_at: Date | null
  }
}

const digest = (uri: string) => createHash('sha256').update(uri).digest()

export async function insertPushed(
  db: IdpDb,
  row: { uri: string; client_id: string; params: Record<string, string>; expires_at: Date },
) {
  await db
    .insertInto('pushed_requests')
    .values({
      uri_hash: digest(row.uri),
      client_id: row.client_id,
      params: JSON.stringify(row.params) as never,
      expires_at: row.expires_at,
    })
    .execute()
}

/** The parameters behind a request_uri of this client, while it is unexpired and unused. */
export async function livePushed(db: IdpDb, uri: string, clientId: string) {
  return db
    .selectFrom('pushed_requests')
    .select('params')
    .where('uri_hash', '=', digest(uri))
    .where('client_id', '=', clientId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst()
}

/** Spends a request_uri on a code: of two concurrent uses, one wins. */
export async function usePushed(db: IdpDb, uri: string) {
  const used = await db
    .updateTable('pushed_requests')
    .set({ used_at: new Date() })
    .where('uri_hash', '=', digest(uri))
    .where('used_at', 'is', null)
    .where('expires_at', '>', new Date())
    .executeTakeFirst()
  return used.numUpdatedRows > 0n
}
