import { defineArea, type IdpContext } from '../../context.ts'
import { logoutRoutes } from './routes.ts'
import { announceLogout, type LogoutDeps, startBackchannelDelivery } from './service.ts'

export interface LogoutService {
  /** Tells the session's clients that it ended (back-channel logout, SSF session revoked). */
  announce(session: Parameters<typeof announceLogout>[1]): ReturnType<typeof announceLogout>
}

/** RP-initiated, back-channel and front-channel logout. */
export const logoutArea = defineArea({
  name: 'logout',
  needs: ['keys', 'signals', 'authorize', 'device', 'clients'],
  async mount(_app, ctx, use) {
    const logout = logoutDeps(ctx, use)
    await startBackchannelDelivery(logout)
    return { announce: (session) => announceLogout(logout, session) }
  },
  routes(app, ctx, use) {
    logoutRoutes(app, logoutDeps(ctx, use))
  },
})

function logoutDeps(
  ctx: IdpContext,
  use: Pick<LogoutDeps, 'keys' | 'signals' | 'authorize' | 'device' | 'clients'>,
): LogoutDeps {
  return {
    ...use,
    db: ctx.db,
    issuer: ctx.issuer,
    pairwiseSalt: ctx.config.pairwiseSalt,
    log: ctx.log,
    jobs: ctx.jobs,
    allowPrivate: ctx.config.fetchAllowPrivate,
  }
}
