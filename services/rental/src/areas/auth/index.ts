import { defineArea } from '../../context.ts'
import { provideSessionChecks } from '../../http/session.ts'
import type { RentalDb } from '../../db.ts'
import { endSessionsOf, eraseSessionsOf } from './store.ts'
import { IdpLink } from './idp-link.ts'
import { authRoutes } from './routes.ts'
import { AccessTokens } from './bearer.ts'

export { ConsoleSessions, SESSION_COOKIE } from './hooks.ts'
export { LIFECYCLE_PATH } from './idp-link.ts'
export { CLI_CLIENT_ID } from './cli-client.ts'

export interface AuthService {
  /** The console's link to the idp (its client and the issuer's metadata). */
  readonly link: IdpLink
  /** Whether sign-in is possible now (the idp linked). */
  signInAvailable(): boolean
  /** Ends every console session of the idp subject (in the caller's transaction); how many. */
  endSessionsOf(trx: RentalDb, subject: string): Promise<number>
  /**
   * Erasure: the sessions of these subjects lose the profile copied from the idp and end, but for
   * `keep` (the eraser's own, which may still read the erasure's answer); in `trx`; how many.
   */
  eraseSessionsOf(trx: RentalDb, subjects: string[], keep?: Buffer): Promise<number>
}

/** Sign-in through the idp, console sessions, the idp's access tokens, back-channel logout. Tables: console_sessions, idp_clients. */
export const authArea = defineArea({
  name: 'auth',
  needs: ['orgs'],
  mount(app, ctx, use): AuthService {
    provideSessionChecks(app, ctx.sessions)
    const link = new IdpLink({
      db: ctx.db,
      sealer: ctx.sealer,
      log: ctx.log,
      issuer: ctx.topology.idp.url,
      baseUrl: ctx.baseUrl,
      client: ctx.config.idpClient,
    })
    // sign-in needs the idp: not ready until the console's client is registered and the issuer discovered
    ctx.addReadinessCheck({ name: 'idp', check: async () => link.ready })
    // the signed-in routes also take the idp's access tokens for this service (bearer.ts)
    ctx.sessions.acceptAccessTokens(
      new AccessTokens({
        link,
        kv: ctx.kv,
        baseUrl: ctx.baseUrl,
        now: () => ctx.now(),
        hasJoined: async (subject) => (await use.orgs.orgIdOf(subject)) !== null,
        join: (who) => use.orgs.join(who),
      }),
    )
    link.start()
    app.addHook('onClose', async () => link.stop())
    return {
      link,
      signInAvailable: () => link.ready,
      endSessionsOf: (trx, subject) => endSessionsOf(trx, { subject }, ctx.now()),
      eraseSessionsOf: (trx, subjects, keep) => eraseSessionsOf(trx, subjects, ctx.now(), keep),
    }
  },
  routes(app, ctx, use, own) {
    authRoutes(app, {
      link: own.link,
      sessions: ctx.sessions,
      kv: ctx.kv,
      baseUrl: ctx.baseUrl,
      join: use.orgs.join,
    })
  },
})
