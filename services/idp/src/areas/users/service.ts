import { notFound } from '@svc/kit'
import { type IdpDb, inTransaction } from '../../db.ts'
import type { AccountsService } from '../accounts/index.ts'
import type { Lifecycle } from '../lifecycle/index.ts'
import type { SessionsService } from '../sessions/index.ts'
import { emit, type SignalDeps } from '../signals/index.ts'
import type { TokenService } from '../token/index.ts'

export interface UserAdminDeps {
  db: IdpDb
  signals: SignalDeps
  sessions: SessionsService
  lifecycle: Lifecycle
  accounts: AccountsService
  tokens: TokenService
}

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

export async function findUser(deps: { db: IdpDb; accounts: AccountsService }, email: string) {
  const row = await deps.accounts.byEmail(deps.db, email)
  if (!row) throw notFound(`no account ${email}`, 'not_found')
  return view(row)
}

/**
 * The admin disables an account: its sessions end, its refresh families die, its access tokens
 * stop standing, it cannot sign in, and the clients that know it get RISC `account-disabled`.
 */
export async function setDisabled(
  deps: UserAdminDeps,
  userId: string,
  disabled: boolean,
  reason?: 'hijacking' | 'bulk-account',
) {
  const row = await inTransaction(deps.db, async (trx) => {
    const updated = await deps.accounts.setDisabledAt(trx, userId, disabled ? new Date() : null)
    if (!updated || !disabled) return updated
    await deps.sessions.endAllOf(trx, userId)
    await deps.tokens.revokeUserFamilies(trx, userId)
    await emit(
      deps.signals,
      trx,
      userId,
      'account-disabled',
      await deps.lifecycle.clientsKnowing(trx, userId),
      reason ? { reason } : {},
    )
    return updated
  })
  if (!row) throw notFound(`no account ${userId}`, 'not_found')
  return view(row)
}
