import { createHash } from 'node:crypto'
import { notFound } from '@svc/kit'
import { type IdpDb, inTransaction } from '../../db.ts'
import { type ChangeDeps, deleteAccount } from './changes.ts'
import { holdRow, placeHoldRow, removeHold } from '../accounts/index.ts'
import { userById } from '../accounts/index.ts'

/** The reason may name a case or a person: the receipt proves it by digest, never publishes it. */
const digestOf = (reason: string) => `sha256:${createHash('sha256').update(reason).digest('hex')}`

const shown = (row: {
  user_id: string
  reason: string
  placed_at: Date
  deletion_requested_at: Date | null
}) => ({
  user_id: row.user_id,
  reason: row.reason,
  placed_at: row.placed_at.toISOString(),
  deletion_requested_at: row.deletion_requested_at?.toISOString() ?? null,
})

async function liveUser(db: IdpDb, userId: string) {
  const user = await userById(db, userId)
  if (!user || user.deleted_at) throw notFound('no such account', 'unknown_user')
  return user
}

/** Places (or restates) a legal hold on an account's data, receipted as `data.retention.hold`. */
export async function placeHold(deps: ChangeDeps, userId: string, reason: string) {
  const user = await liveUser(deps.db, userId)
  return inTransaction(deps.db, async (trx) => {
    const row = await placeHoldRow(trx, userId, reason)
    await deps.receipts.record(trx, {
      type: 'data.retention.hold',
      subject: user.did!,
      data: { record: 'account', hold: 'placed', reason_digest: digestOf(reason) },
    })
    return shown(row)
  })
}

/**
 * Releases the hold (receipted); a deletion the owner asked for while it stood is carried out
 * now, receipted as `data.retention.deleted` like any other.
 */
export async function releaseHold(deps: ChangeDeps, userId: string) {
  const user = await liveUser(deps.db, userId)
  const released = await inTransaction(deps.db, async (trx) => {
    const row = await removeHold(trx, userId)
    if (!row) return undefined
    await deps.receipts.record(trx, {
      type: 'data.retention.hold',
      subject: user.did!,
      data: { record: 'account', hold: 'released', reason_digest: digestOf(row.reason) },
    })
    return row
  })
  if (!released) throw notFound('the account has no retention hold', 'no_hold')
  if (released.deletion_requested_at) await deleteAccount(deps, userId, {})
  return { ...shown(released), deleted: Boolean(released.deletion_requested_at) }
}

export async function holdOf(db: IdpDb, userId: string) {
  await liveUser(db, userId)
  const row = await holdRow(db, userId)
  if (!row) throw notFound('the account has no retention hold', 'no_hold')
  return shown(row)
}
