import { defineArea } from '../../context.ts'
import * as store from './store.ts'

/**
 * What other areas may ask of sessions (in the caller's db or transaction). Sessions are started
 * and ended by the sign-in pages (./service.ts); this is what the account's changes, its export
 * and the token checks need.
 */
const sessionsService = {
  /** Ends the account's live sessions, all or all but one `sid`. */
  endAllOf: store.endSessionsOf,
  liveUserOf: store.liveSessionUser,
  toExport: store.sessionsToExport,
  forgetDevicesOf: store.forgetDevicesOf,
  liveOf: store.liveSessionsOf,
  /** Ends one live session (the account page's "sign out other sessions"). */
  endOne: store.endSessionBySid,
}

export type SessionsService = typeof sessionsService

/** Browser sessions: started by a sign-in, looked up by the pages, ended by sign-out or a change. */
export const sessionsArea = defineArea({
  name: 'sessions',
  mount: (): SessionsService => sessionsService,
})

export { backHere, pageHooks, sessionOf } from './pages.ts'
export { currentSession, endSession, type Session, startSession } from './service.ts'
export { recognizeDevice } from './devices.ts'
