import { defineArea } from '../../context.ts'
import { deviceRoutes } from './routes.ts'

export { deviceService } from './service.ts'

/** The device authorization grant (RFC 8628): device codes and the user-code page. */
export const deviceArea = defineArea({
  name: 'device',
  needs: ['receipts'],
  mount(app, ctx, { receipts }) {
    deviceRoutes(app, {
      db: ctx.db,
      kv: ctx.kv,
      issuer: ctx.issuer,
      receipts,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
      now: ctx.config.now,
      ratePerMinute: ctx.config.tokenRatePerMinute.ip,
      userCodesPerMinute: ctx.config.userCodeRatePerMinute,
    })
    return undefined
  },
})
