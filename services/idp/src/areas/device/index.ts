import { defineArea } from '../../context.ts'
import { deviceService } from './service.ts'
import { deviceRoutes } from './routes.ts'

/** What other areas ask of device codes: their digest, their redemption and polls, the clients a user or session used. */
export type DeviceService = typeof deviceService

/** The device authorization grant (RFC 8628): device codes and the user-code page. */
export const deviceArea = defineArea({
  name: 'device',
  needs: ['receipts', 'accounts'],
  mount(_app, ctx): DeviceService {
    // the clients that redeemed a device code of the user know it (the lifecycle tells them)
    ctx.reactions.on('user.clients', async (trx, known) => {
      for (const id of await deviceService.clientIdsOfUser(trx, known.userId)) known.clientIds.add(id)
    })
    return deviceService
  },
  routes(app, ctx, { receipts, accounts }) {
    deviceRoutes(app, {
      db: ctx.db,
      kv: ctx.kv,
      issuer: ctx.issuer,
      receipts,
      accounts,
      origin: ctx.origin,
      secureCookies: ctx.secureCookies,
      now: ctx.config.now,
      intervalS: ctx.config.deviceIntervalS,
      ratePerMinute: ctx.config.tokenRatePerMinute.ip,
      userCodesPerMinute: ctx.config.userCodeRatePerMinute,
    })
  },
})
