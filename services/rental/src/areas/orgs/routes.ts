import { type App, type Page, PageQuery, pageOf } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type ConsoleSessions } from '../auth/hooks.ts'
import { actorOfRequest, type EventService } from '../events/index.ts'
import { InvitationSchema, MemberSchema, RoleNameSchema } from './schemas.ts'
import { changeRole, invite, memberList, removeMember } from './service.ts'
import { membershipOf, route, sessionOf } from '../../http/index.ts'

const MemberId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

export interface OrgRouteDeps {
  db: RentalDb
  events: EventService
  sessions: ConsoleSessions
  /** Whether the signed-in client is one of the platform's operators (RENTAL_OPERATORS). */
  isOperator(who: { subject: string; email: string | null; emailVerified: boolean }): boolean
  operators: readonly string[]
}

export function orgRoutes(app: App, deps: OrgRouteDeps) {
  const { db, sessions } = deps
  const by = (request: Parameters<typeof actorOfRequest>[0]) => ({
    events: deps.events,
    actor: actorOfRequest(request),
  })
  const tags = ['org']
  app.get(
    '/api/org/members',
    {
      ...route.session('org:read'),
      schema: {
        summary: 'The organization’s members and pending invitations',
        tags,
        querystring: PageQuery,
        response: { 200: Type.Object({ members: Type.Array(MemberSchema) }) },
      },
    },
    async (request) => memberList(db, membershipOf(request).orgId, pageOf(request.query) as Page),
  )
  app.post(
    '/api/org/members',
    {
      ...route.csrf('members:write'),
      schema: {
        summary:
          'Invites by email: the invitee joins at its next sign-in with that email, verified at the idp',
        tags,
        body: InvitationSchema,
        response: { 201: MemberSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await invite(db, by(request), membershipOf(request), request.body)),
  )
  app.delete(
    '/api/org/members/:id',
    {
      ...route.csrf('members:write'),
      schema: {
        summary:
          'Removes a member (their sessions end) or an invitation; the last owner cannot be removed (409)',
        tags,
        params: MemberId,
        response: { 200: Type.Object({ id: Type.String(), removed: Type.Literal(true) }) },
      },
    },
    async (request) => {
      const { removed, subject } = await removeMember(
        db,
        by(request),
        membershipOf(request),
        request.params.id,
      )
      if (subject) await sessions.endAllOf(subject)
      return { id: removed.id, removed: true as const }
    },
  )
  app.post(
    '/api/org/members/:id/role',
    {
      ...route.csrf('members:write'),
      schema: {
        summary: 'Sets a member’s role (only owners make or unmake owners; the last owner keeps the role)',
        tags,
        params: MemberId,
        body: Type.Object({ role: RoleNameSchema }, { additionalProperties: false }),
        response: { 200: MemberSchema },
      },
    },
    async (request) =>
      changeRole(db, by(request), membershipOf(request), request.params.id, request.body.role),
  )
  app.get(
    '/api/admin/operators',
    {
      ...route.session(),
      schema: {
        summary: 'The platform’s operators (RENTAL_OPERATORS): operators only',
        tags: ['admin'],
        response: {
          200: Type.Object({
            operators: Type.Array(
              Type.Object({
                id: Type.String({ description: 'an idp subject or a verified email' }),
                kind: Type.Union([Type.Literal('subject'), Type.Literal('email')]),
              }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const session = sessionOf(request)
      if (!deps.isOperator(session))
        throw rentalError('forbidden', 'only the platform’s operators (RENTAL_OPERATORS) may list them')
      return {
        operators: deps.operators.map((id) => ({
          id,
          kind: id.includes('@') ? ('email' as const) : ('subject' as const),
        })),
      }
    },
  )
}
