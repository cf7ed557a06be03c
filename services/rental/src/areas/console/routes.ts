import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { ConsoleSessions } from '../auth/hooks.ts'
import type { OrgService } from '../orgs/index.ts'
import { CSRF_HEADER, membershipOf, route, sessionOf } from '../../http/index.ts'

const Me = Type.Object({
  client: Type.Object({
    subject: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()]),
    client_did: Type.Union([Type.String(), Type.Null()]),
  }),
  organization: Type.Object({
    id: Type.String(),
    member_id: Type.String(),
    role: Type.String(),
    permissions: Type.Array(Type.String(), { description: 'what the role may do (rental_roles)' }),
  }),
  operator: Type.Boolean({ description: 'one of the platform’s operators (RENTAL_OPERATORS)' }),
  csrf_token: Type.String({ description: `send it in the ${CSRF_HEADER} header of every S+C request` }),
  csrf_header: Type.String(),
  ledger_url: Type.String(),
})

/** `GET /api/me`: who is signed in, the session's CSRF token, where the ledger is. */
export function consoleRoutes(
  app: App,
  sessions: ConsoleSessions,
  ledgerUrl: string,
  orgs: Pick<OrgService, 'isOperator'>,
) {
  app.get(
    '/api/me',
    {
      ...route.session(),
      schema: {
        summary:
          'The signed-in client, its organization and role, the CSRF token of the session and the ledger URL',
        tags: ['console'],
        response: { 200: Me },
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const membership = membershipOf(request)
      reply.header('cache-control', 'no-store')
      return {
        client: {
          subject: session.subject,
          name: session.name,
          email: session.email,
          client_did: session.clientDid,
        },
        organization: {
          id: membership.orgId,
          member_id: membership.memberId,
          role: membership.role,
          permissions: [...membership.permissions],
        },
        operator: orgs.isOperator(session),
        csrf_token: session.csrfToken,
        csrf_header: CSRF_HEADER,
        ledger_url: ledgerUrl,
      }
    },
  )
}
