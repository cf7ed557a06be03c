import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

export interface ChainHead {
  pos: number
  hash: string
}

/** The organizations' chain heads, locked FOR UPDATE (in org order: concurrent writers do not deadlock). */
export async function lockHeads(trx: RentalDb, orgIds: string[]): Promise<Map<string, ChainHead>> {
  if (orgIds.length === 0) return new Map()
  const rows = await trx
    .selectFrom('rental_audit_chains')
    .select(['org_id', 'last_pos', 'last_hash'])
    .where('org_id', 'in', orgIds)
    .orderBy('org_id')
    .forUpdate()
    .execute()
  return new Map(rows.map((r) => [r.org_id, { pos: Number(r.last_pos), hash: r.last_hash }]))
}

/** Gives events their place and link, all in one statement. */
export async function setLinks(trx: RentalDb, links: Array<{ seq: number; pos: number; hash: string }>) {
  if (links.length === 0) return
  const values = sql.join(
    links.map((l) => sql`(${String(l.seq)}::bigint, ${String(l.pos)}::bigint, ${l.hash})`),
  )
  await sql`update rental_events as e set chain_pos = v.pos, chain_hash = v.hash
    from (values ${values}) as v (seq, pos, hash) where e.seq = v.seq`.execute(trx)
}

/** Moves the organizations' chain heads, all in one statement. */
export async function saveHeads(trx: RentalDb, heads: Map<string, ChainHead>) {
  if (heads.size === 0) return
  const values = sql.join([...heads].map(([org, h]) => sql`(${org}, ${h.pos}, ${h.hash})`))
  await sql`insert into rental_audit_chains (org_id, last_pos, last_hash) values ${values}
    on conflict (org_id) do update set last_pos = excluded.last_pos, last_hash = excluded.last_hash, updated_at = now()`.execute(
    trx,
  )
}

/** The organization's chain head (genesis values when it has none yet). */
export async function headOf(db: RentalDb, orgId: string) {
  return db
    .selectFrom('rental_audit_chains')
    .select(['last_pos', 'last_hash'])
    .where('org_id', '=', orgId)
    .executeTakeFirst()
}

/** The organization's chained events at places `from` to `to`, in order, at most `limit`. */
export const chainedEvents = (db: RentalDb, orgId: string, from: number, to: number, limit: number) =>
  db
    .selectFrom('rental_events')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('chain_pos', '>=', String(from))
    .where('chain_pos', '<=', String(to))
    .orderBy('chain_pos')
    .limit(limit)
    .execute()
