import { defineArea } from '../../context.ts'
import { mfaRoutes } from './routes.ts'

export { beginSecondFactor } from './pending.ts'
export { mfaService } from './service.ts'
export { hasTotp } from './totp.ts'

/** TOTP second factor: enrolment and the second step of sign-in. */
export const mfaArea = defineArea({
  name: 'mfa',
  needs: ['receipts'],
  mount(app, ctx, { receipts }) {
    mfaRoutes(app, {
      db: ctx.db,
      receipts,
      kv: ctx.kv,
      sealer: ctx.sealer,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
    })
    return undefined
  },
})
