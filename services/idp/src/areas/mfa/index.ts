import { defineArea } from '../../context.ts'
import { mfaService } from './service.ts'
import { mfaRoutes } from './routes.ts'

export { beginSecondFactor } from './pending.ts'
export { hasTotp } from './totp.ts'

/** What other areas ask of the second factor: forgetting an account's. */
export type MfaService = typeof mfaService

/** TOTP second factor: enrolment and the second step of sign-in. */
export const mfaArea = defineArea({
  name: 'mfa',
  needs: ['receipts'],
  mount: (): MfaService => mfaService,
  routes(app, ctx, { receipts }) {
    mfaRoutes(app, {
      db: ctx.db,
      receipts,
      kv: ctx.kv,
      sealer: ctx.sealer,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
  },
})
