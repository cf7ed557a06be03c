import { defineArea } from '../../context.ts'
import { accountChangeRoutes } from './change-routes.ts'
import { retentionRoutes } from './retention-routes.ts'
import { accountRoutes } from './routes.ts'
import { ensureDemoUser } from './service.ts'
import { backfillUserKeys } from './store.ts'

/** What other areas read or change of the accounts' tables: only through these. */
export { recentEvents, removePassword, userById } from './store.ts'

/** Accounts: sign-up, email verification, password reset, changes, export, deletion and holds. */
export const accountsArea = defineArea({
  name: 'accounts',
  needs: ['email', 'receipts', 'lifecycle', 'signals'],
  async mount(app, ctx, { email, receipts, lifecycle, signals }) {
    const { db, sealer, issuer, origin, secureCookies } = ctx
    await backfillUserKeys(db, sealer)
    if (ctx.development) await ensureDemoUser(db, sealer, ctx.config.demoPassword)
    const changes = { db, mailer: email, receipts, lifecycle, signals, issuer }
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
