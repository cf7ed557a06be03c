import { defineArea } from '../../context.ts'
import { accountChangeRoutes } from './change-routes.ts'
import { retentionRoutes } from './retention-routes.ts'
import { accountRoutes } from './routes.ts'

export { changeForms } from './change-routes.ts'
export { exportAccount } from './export.ts'

/** Sign-up, email verification, password reset, changes, export, deletion and holds of an account. */
export const accountChangesArea = defineArea({
  name: 'account-changes',
  needs: ['email', 'receipts', 'lifecycle', 'signals', 'sessions'],
  mount(app, ctx, { email, receipts, lifecycle, signals, sessions }) {
    const { db, sealer, issuer, origin, secureCookies } = ctx
    const changes = { db, mailer: email, receipts, lifecycle, signals, sessions, issuer }
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
    return undefined
  },
})
