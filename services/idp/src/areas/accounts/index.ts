import { defineArea } from '../../context.ts'
import { accountsService, ensureDemoUser } from './service.ts'

/** What other areas ask of the accounts: a user by id, address or DID, names, the admin's disabled mark. */
export type AccountsService = typeof accountsService
import { backfillUserKeys } from './store.ts'

export { authenticate, createUser, DEMO_EMAIL, recordEvent, requestContext, type UserRow } from './service.ts'
export { hashPassword, verifyPassword } from './passwords.ts'
export { completeSignIn } from './sign-in.ts'

/** What other areas read or change of the accounts' tables: only through these. */
export {
  disableUser,
  eraseUser,
  eventsToExport,
  insertEmailChange,
  markEmailVerified,
  recentEvents,
  removePassword,
  setPasswordHash,
  setVerifiedEmail,
  useEmailChange,
  userByEmail,
  userById,
} from './store.ts'
export { holdFor, holdRow, markDeletionRequested, placeHoldRow, removeHold } from './retention-store.ts'

/**
 * Accounts: who a person is (the users, their security events, their holds), how they are
 * checked (passwords) and how a sign-in completes. What changes an account is areas/account-changes.
 */
export const accountsArea = defineArea({
  name: 'accounts',
  async mount(_app, ctx): Promise<AccountsService> {
    const { db, sealer } = ctx
    await backfillUserKeys(db, sealer)
    if (ctx.development) await ensureDemoUser(db, sealer, ctx.config.demoPassword)
    return accountsService
  },
})
