import { type App, AppError, html } from '@svc/kit'
import { Type } from 'typebox'
import { checkCsrf, csrfToken } from '../../pages/csrf.ts'
import { currentSession } from '../sessions/index.ts'
import { langOf, t } from '../../pages/i18n.ts'
import { langField, localPage, sendLocalMessage, sendMessage } from '../../pages/layout.ts'
import { accept, invitation, invite, type MemberDeps, members, removeMember } from './members.ts'
import { orgKey, orgOf } from './auth.ts'
import { NoContent } from '../../responses.ts'
import { idpError } from '../../errors.ts'

const Role = Type.Union([Type.Literal('admin'), Type.Literal('member')])
const Token = Type.String({ minLength: 1, maxLength: 100 })

/** An organization's members: invited by email, accepting on a page, listed and removed by the organization. */
export function memberRoutes(app: App, deps: MemberDeps & { origin: string; secureCookies: boolean }) {
  const { db } = deps
  const tags = ['organizations']
  const security = [{ organizationKey: [] }]
  const authed = orgKey(db)

  app.post(
    '/orgs/members/invite',
    {
      ...authed,
      schema: {
        summary: 'Invite an address to join with a role; the link goes by email',
        tags,
        security,
        body: Type.Object(
          { email: Type.String({ format: 'email', maxLength: 320 }), role: Role },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            email: Type.String(),
            role: Role,
            expires_at: Type.String({ format: 'date-time' }),
          }),
        },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await invite(deps, orgOf(request), request.body.email, request.body.role)),
  )
  app.get(
    '/orgs/members',
    {
      ...authed,
      schema: { summary: 'The members, by the pairwise id the organization’s clients see', tags, security },
    },
    async (request) => ({ members: await members(deps, orgOf(request)) }),
  )
  app.delete(
    '/orgs/members/:user_id',
    {
      ...authed,
      schema: {
        summary: 'Remove a member',
        tags,
        security,
        params: Type.Object({ user_id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: NoContent,
      },
    },
    async (request, reply) => {
      await removeMember(deps, orgOf(request), request.params.user_id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/ui/orgs/accept',
    {
      schema: {
        summary: 'The page where an invitee joins',
        tags: ['pages'],
        querystring: Type.Object({ token: Token }),
      },
    },
    async (request, reply) => {
      const session = await currentSession(db, request)
      if (!session) return reply.redirect(`/ui/login?${new URLSearchParams({ return_to: request.url })}`, 303)
      const found = await invitation(db, request.query.token)
      if (!found)
        return sendLocalMessage(reply, 400, 'Invitation', 'This invitation has expired or was already used.')
      const csrf = csrfToken(request, reply, deps.secureCookies)
      const lang = langOf(request)
      return reply.type('text/html; charset=utf-8').send(
        localPage(
          request,
          'Invitation',
          html`<h1>${t(lang, 'Join {organization}', { organization: found.organization_name })}</h1>
            <p>${t(lang, 'You are invited as')} <strong>${found.role}</strong>.</p>
            <form method="post" action="/ui/orgs/accept">
              <input type="hidden" name="csrf" value="${csrf}" />
              <input type="hidden" name="token" value="${request.query.token}" />
              ${langField(lang)}
              <button type="submit">${t(lang, 'Join')}</button>
            </form>`,
        ),
      )
    },
  )
  app.post(
    '/ui/orgs/accept',
    {
      schema: {
        summary: 'Accept an invitation as the signed-in account',
        tags: ['pages'],
        body: Type.Object({ csrf: Type.String({ maxLength: 100 }), token: Token }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, deps.origin)
      const session = await currentSession(db, request)
      if (!session) throw idpError('login_required', 'sign in to accept the invitation')
      const user = (await deps.accounts.byId(db, session.user_id))!
      try {
        const joined = await accept(db, request.body.token, user)
        return sendLocalMessage(reply, 200, 'Invitation', 'You joined {organization} as {role}.', {
          organization: joined.organization_name,
          role: joined.role,
        })
      } catch (err) {
        if (!(err instanceof AppError)) throw err
        return sendMessage(
          reply,
          err.status,
          'Invitation',
          `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.`,
        )
      }
    },
  )
}
