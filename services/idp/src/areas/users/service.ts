import { notFound } from '@svc/kit'
import { type IdpDb, inTransaction } from '../../db.ts'
import { clientsKnowing } from '../lifecycle/store.ts'
import { emit, type SignalDeps } from '../signals/service.ts'
import { revokeUserFamilies } from '../token/store.ts'

const view = (row: {
  id: string
  email: string
  disabled_at: Date | null
  deleted_at: Date | null
  created_at: Date
}) => ({
  id: row.id,
  email: row.email,
  disabled: row.disabled_at !== null,
  deleted: row.deleted_at !== null,
  created_at: row.created_at.toISOString(),
})

export async function findUser(db: IdpDb, email: string) {
  const row = await db
    .selectFrom('users')
    .select(['id', 'email', 'disabled_at', 'deleted_at', 'created_at'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst()
  if (!row) throw notFound(`no account ${email}`, 'not_found')
  return view(row)
}

/**
 * The admin disables an account: its sessions end, its refresh families die, its access tokens
 * stop standing, it cannot sign in, and the clients that know it get RISC `account-disabled`.
 */
export async function setDisabled(
  deps: { db: IdpDb; signals: SignalDeps },
  userId: string,
  disabled: boolean,
  reason?: 'hijacking' | 'bulk-account',
) {
  const row = await inTransaction(deps.db, async (trx) => {
    const updated = await trx
      .updateTable('users')
      .set({ disabled_at: disabled ? new Date() : null })
      .where('id', '=', userId)
      .where('deleted_at', 'is', null)
      .returning(['id', 'email', 'disabled_at', 'deleted_at', 'created_at'])
      .executeTakeFirst()
    if (!updated || !disabled) return updated
    await trx
      .updateTable('sessions')
      .set({ ended_at: new Date() })
      .where('user_id', '=', userId)
      .where('ended_at', 'is', null)
      .execute()
    await revokeUserFamilies(trx, userId)
    await emit(
      deps.signals,
      trx,
      userId,
      'account-disabled',
      await clientsKnowing(trx, userId),
      reason ? { reason } : {},
    )
    return updated
  })
  if (!row) throw notFound(`no account ${userId}`, 'not_found')
  return view(row)
}
