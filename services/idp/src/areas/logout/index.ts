import { defineArea } from '../../context.ts'
import { logoutRoutes } from './routes.ts'
import { announceLogout, type LogoutDeps, startBackchannelDelivery } from './service.ts'

export interface LogoutService {
  /** Tells the session's clients that it ended (back-channel logout, SSF session revoked). */
  announce(session: Parameters<typeof announceLogout>[1]): ReturnType<typeof announceLogout>
}

/** RP-initiated, back-channel and front-channel logout. */
export const logoutArea = defineArea({
  name: 'logout',
  needs: ['keys', 'signals'],
  async mount(app, ctx, { keys, signals }) {
    const logout: LogoutDeps = {
      db: ctx.db,
      keys,
      issuer: ctx.issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      log: ctx.log,
      jobs: ctx.jobs,
      signals,
      allowPrivate: ctx.config.fetchAllowPrivate,
    }
    await startBackchannelDelivery(logout)
    logoutRoutes(app, logout)
    return { announce: (session) => announceLogout(logout, session) }
  },
})
