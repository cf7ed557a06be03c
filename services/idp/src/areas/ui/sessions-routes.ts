import type { App } from '@svc/kit'
import type { IdpDb } from '../../db.ts'
import { recordEvent, requestContext } from '../accounts/index.ts'
import { CsrfOnly } from '../../pages/csrf.ts'
import type { SessionsService } from '../sessions/index.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'

interface SessionsRouteDeps {
  db: IdpDb
  sessions: SessionsService
  origin: string
  /** Tells the clients of an ended session (back-channel logout, SSF); front-channel frames are not loaded here. */
  onSessionEnd: (session: { sid: string; user_id: string }) => Promise<string[]>
}

/** The account page's "sign out other sessions": every live session of the account but this one ends. */
export function sessionsRoutes(app: App, { db, sessions, origin, onSessionEnd }: SessionsRouteDeps) {
  app.post(
    '/ui/account/sessions/end-others',
    {
      ...pageHooks({ db, origin }).form('sign in to end your other sessions'),
      schema: {
        summary: 'Sign out every other session of the account; their clients get a back-channel logout',
        tags: ['pages'],
        body: CsrfOnly,
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const others = (await sessions.liveOf(db, session.user_id)).filter((s) => s.sid !== session.sid)
      let ended = 0
      for (const other of others) {
        // one at a time, each announced once: a session another request ends meanwhile is skipped
        if (!(await sessions.endOne(db, session.user_id, other.sid))) continue
        ended++
        // the other browsers' front-channel frames cannot load here; back-channel and SSF carry it
        await onSessionEnd({ sid: other.sid, user_id: session.user_id })
      }
      if (ended) await recordEvent(db, session.user_id, 'other_sessions_ended', requestContext(request))
      return reply.redirect('/ui/account', 303)
    },
  )
}
