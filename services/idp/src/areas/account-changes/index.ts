import { defineArea } from '../../context.ts'
import { accountChangeRoutes } from './change-routes.ts'
import { exportAccount } from './export.ts'
import { retentionRoutes } from './retention-routes.ts'
import { accountRoutes } from './routes.ts'

export { deleteForm, emailForm, keyBackupForm, passwordForm } from './change-routes.ts'

/** What the account page asks of the account's changes: everything kept about the account, to take away. */
export interface AccountChangesService {
  exportOf(userId: string): ReturnType<typeof exportAccount>
}

/** Sign-up, email verification, password reset, changes, export, deletion and holds of an account. */
export const accountChangesArea = defineArea({
  name: 'account-changes',
  needs: [
    'email',
    'receipts',
    'lifecycle',
    'signals',
    'sessions',
    'authorize',
    'clients',
    'mfa',
    'orgs',
    'passkeys',
    'tasks',
    'token',
  ],
  mount(_app, ctx, { authorize, clients, sessions, tasks }): AccountChangesService {
    const exported = { db: ctx.db, authorize, clients, sessions, tasks }
    return { exportOf: (userId) => exportAccount(exported, userId) }
  },
  routes(app, ctx, { email, receipts, lifecycle, signals, sessions, authorize, mfa, orgs, passkeys, token }) {
    const { db, sealer, issuer, origin, secureCookies } = ctx
    const changes = {
      db,
      mailer: email,
      receipts,
      lifecycle,
      signals,
      sessions,
      issuer,
      authorize,
      passkeys,
      mfa,
      orgs,
      tokens: token,
    }
    retentionRoutes(app, { ...changes, adminToken: ctx.config.adminToken })
    accountRoutes(app, {
      db,
      mailer: email,
      sealer,
      kv: ctx.kv,
      issuer,
      origin,
      secureCookies,
      development: ctx.development,
      ratePerMinute: ctx.config.registerRatePerMinute,
      changes,
    })
    accountChangeRoutes(app, { ...changes, origin, sealer })
  },
})
