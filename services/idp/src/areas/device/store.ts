import type { Generated } from 'kysely'
import { createHash } from 'node:crypto'
import type { Insertable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the device area. */
export interface DeviceTables {
  device_codes: {
    device_code_hash: Buffer
    user_code: string
    client_id: string
    scope: string[]
    resource: string | null
    status: Generated<'pending' | 'approved' | 'denied'>
    interval_s: number
    last_polled_at: Date | null
    created_at: Generated<Date>
    expires_at: Date
    user_id: string | null
    sid: string | null
    auth_time: Date | null
    acr: string | null
    amr: string[] | null
    consumed_at: Date | null
  }
}

type DeviceCodes = IdpTables['device_codes']

export const digest = (deviceCode: string) => createHash('sha256').update(deviceCode).digest()

/** Stores a new request; false when its user code is taken (the caller draws another). */
export async function insertDeviceCode(db: IdpDb, row: Insertable<DeviceCodes>) {
  const inserted = await db
    .insertInto('device_codes')
    .values(row)
    .onConflict((oc) => oc.column('user_code').doNothing())
    .returning('user_code')
    .executeTakeFirst()
  return inserted !== undefined
}

/** The request behind a user code while the user can still answer it, with its client. */
export async function pendingByUserCode(db: IdpDb, userCode: string, now: Date) {
  return db
    .selectFrom('device_codes')
    .innerJoin('clients', 'clients.client_id', 'device_codes.client_id')
    .select([
      'device_codes.user_code',
      'device_codes.scope',
      'clients.client_id',
      'clients.client_name',
      'clients.first_party',
    ])
    .where('device_codes.user_code', '=', userCode)
    .where('device_codes.status', '=', 'pending')
    .where('device_codes.expires_at', '>', now)
    .executeTakeFirst()
}

export type Decision =
  | { status: 'denied' }
  | { status: 'approved'; user_id: string; sid: string; auth_time: Date; acr: string; amr: string[] }

/** Records the user's answer to a pending request, atomically: a request is answered once. */
export async function decideDeviceCode(db: IdpDb, userCode: string, now: Date, decision: Decision) {
  const decided = await db
    .updateTable('device_codes')
    .set(decision)
    .where('user_code', '=', userCode)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst()
  return decided.numUpdatedRows > 0n
}

/** Marks an approved code of this client consumed and returns it: of two concurrent redemptions, one wins. */
export async function consumeApproved(db: IdpDb, hash: Buffer, clientId: string, now: Date) {
  return db
    .updateTable('device_codes')
    .set({ consumed_at: now })
    .where('device_code_hash', '=', hash)
    .where('client_id', '=', clientId)
    .where('status', '=', 'approved')
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()
}

/** A device code, locked until the transaction ends, so that concurrent polls are counted one after the other. */
export async function lockDeviceCode(db: IdpDb, hash: Buffer) {
  return db
    .selectFrom('device_codes')
    .selectAll()
    .where('device_code_hash', '=', hash)
    .forUpdate()
    .executeTakeFirst()
}

export async function recordPoll(db: IdpDb, hash: Buffer, now: Date, intervalS: number) {
  await db
    .updateTable('device_codes')
    .set({ last_polled_at: now, interval_s: intervalS })
    .where('device_code_hash', '=', hash)
    .execute()
}

/** The clients that redeemed a device code in this session (to tell when it ends). */
export async function clientIdsOfSession(db: IdpDb, sid: string) {
  const rows = await db
    .selectFrom('device_codes')
    .select('client_id')
    .distinct()
    .where('sid', '=', sid)
    .where('consumed_at', 'is not', null)
    .execute()
  return rows.map((row) => row.client_id)
}

/** The clients that redeemed a device code of the user (they know the user). */
export async function clientIdsOfUser(db: IdpDb, userId: string) {
  const rows = await db
    .selectFrom('device_codes')
    .select('client_id')
    .distinct()
    .where('user_id', '=', userId)
    .where('consumed_at', 'is not', null)
    .execute()
  return rows.map((row) => row.client_id)
}
