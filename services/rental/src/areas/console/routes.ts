import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { type ConsoleSessions, CSRF_HEADER, SESSION_SECURITY, sessionOf } from '../auth/hooks.ts'

const Me = Type.Object({
  client: Type.Object({
    subject: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    client_did: Type.Union([Type.String(), Type.Null()]),
  }),
  csrf_token: Type.String({ description: `send it in the ${CSRF_HEADER} header of every S+C request` }),
  csrf_header: Type.String(),
  ledger_url: Type.String(),
})

/** `GET /api/me`: who is signed in, the session's CSRF token, where the ledger is. */
export function consoleRoutes(app: App, sessions: ConsoleSessions, ledgerUrl: string) {
  app.get(
    '/api/me',
    {
      ...sessions.session,
      schema: {
        summary: 'The signed-in client, the CSRF token of the session and the ledger URL',
        tags: ['console'],
        security: SESSION_SECURITY,
        response: { 200: Me },
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      reply.header('cache-control', 'no-store')
      return {
        client: {
          subject: session.subject,
          name: session.name,
          email: session.email,
          client_did: session.clientDid,
        },
        csrf_token: session.csrfToken,
        csrf_header: CSRF_HEADER,
        ledger_url: ledgerUrl,
      }
    },
  )
}
