import { type App, type Kv } from '@svc/kit'
import { Type } from 'typebox'
import type { ClientAuthDeps } from '../clients/index.ts'
import { authenticateClient } from '../clients/index.ts'
import { challenge } from '../../oauth/challenge.ts'
import { ClientAuthFields } from '../../oauth/form.ts'
import type { PresentedTokenDeps } from '../../oauth/presented-token.ts'
import type { TokenService } from '../token/index.ts'
import { csrfToken } from '../../pages/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { clientById } from '../clients/index.ts'
import { langOf } from '../../pages/i18n.ts'
import { localPage, sendLocalMessage } from '../../pages/layout.ts'
import { approvalPage } from './pages.ts'
import { type ApprovalDeps, createApproval, decideApproval, pollApproval } from './service.ts'
import { approvalById } from './store.ts'
import { idpError } from '../../errors.ts'

const ApprovalRequest = Type.Object({
  action: Type.String({ minLength: 1, maxLength: 300 }),
  // values are checked by the service: a union here would let the validator coerce 420 into '420'
  detail: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Unknown(), { maxProperties: 12 })),
  expires_in: Type.Optional(Type.Integer({ minimum: 60, maximum: 86_400 })),
  ...ClientAuthFields,
})

type Deps = ApprovalDeps &
  PresentedTokenDeps &
  ClientAuthDeps & { kv: Kv; origin: string; secureCookies: boolean; tokens: TokenService }

/**
 * "Ask my human" (identity-provider.md, Approvals): a confidential client with a user's access
 * token asks the user to approve an action, polls for the answer, and the user answers on a page.
 */
export function approvalRoutes(app: App, deps: Deps) {
  app.post(
    '/approvals',
    {
      schema: {
        summary: 'Ask the user behind the access token to approve an action',
        tags: ['approvals'],
        body: ApprovalRequest,
        response: {
          201: Type.Object({
            approval_id: Type.String(),
            status: Type.String(),
            expires_in: Type.Integer(),
            interval: Type.Integer(),
            approval_uri: Type.String(),
          }),
        },
      },
    },
    async (request, reply) => {
      const { action, detail, expires_in, ...credentials } = request.body
      // identity-provider.md, Approvals: the client's credentials come in the body (or Basic)
      const client = await authenticateClient(deps, request, credentials)
      if (client.client_type !== 'confidential')
        throw idpError('invalid_client', 'approvals are asked by confidential clients')
      const { payload, holder } = await deps.tokens.userOf(deps, request)
      if (payload.client_id !== client.client_id)
        throw idpError('invalid_token', 'the access token was not issued to this client', {
          'www-authenticate': challenge('Bearer', { error: 'invalid_token' }),
        })
      const created = await createApproval(deps, client.client_id, holder.user.id, {
        action,
        detail,
        expires_in,
      })
      return reply.code(201).header('cache-control', 'no-store').send(created)
    },
  )

  app.get(
    '/approvals/:id',
    {
      schema: {
        summary: 'The outcome of an approval: pending, approved, denied or expired',
        tags: ['approvals'],
        params: Type.Object({ id: Type.String({ maxLength: 100 }) }),
        // HTTP Basic is the way; a private_key_jwt client sends its assertion here, having no body
        querystring: Type.Object({
          client_id: Type.Optional(Type.String({ maxLength: 200 })),
          client_assertion: Type.Optional(Type.String({ maxLength: 8000 })),
          client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
        }),
      },
    },
    async (request, reply) => {
      const { client_id, client_assertion, client_assertion_type } = request.query
      const client = await authenticateClient(deps, request, {
        client_id,
        client_assertion,
        client_assertion_type,
      })
      return reply
        .header('cache-control', 'no-store')
        .send(await pollApproval(deps, client.client_id, request.params.id))
    },
  )

  const Params = Type.Object({ id: Type.String({ maxLength: 100 }) })
  const pages = pageHooks(deps)
  /** The approval, for the signed-in user it asks; undefined for anyone else. */
  const ownApproval = async (userId: string, id: string) => {
    const row = await approvalById(deps.db, id)
    if (!row || row.user_id !== userId) return undefined
    const client = await clientById(deps.db, row.client_id)
    return { row, clientName: client!.client_name }
  }

  app.get(
    '/ui/approvals/:id',
    {
      ...pages.signedIn(),
      schema: { summary: 'The page where the user answers an approval', tags: ['pages'], params: Params },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const found = await ownApproval(session.user_id, request.params.id)
      if (!found) return sendLocalMessage(reply, 404, 'Approval', 'There is no such request for you.')
      const csrf = csrfToken(request, reply, deps.secureCookies)
      return reply
        .type('text/html; charset=utf-8')
        .send(
          localPage(request, 'Approval', approvalPage(langOf(request), found.row, found.clientName, csrf)),
        )
    },
  )

  app.post(
    '/ui/approvals/:id',
    {
      ...pages.form('sign in to answer this request'),
      schema: {
        summary: 'Approve or refuse',
        tags: ['pages'],
        params: Params,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          decision: Type.Union([Type.Literal('approve'), Type.Literal('refuse')]),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const found = await ownApproval(session.user_id, request.params.id)
      if (!found) return sendLocalMessage(reply, 404, 'Approval', 'There is no such request for you.')
      const decision = request.body.decision === 'approve' ? 'approved' : 'denied'
      if (!(await decideApproval(deps, session.user_id, request.params.id, decision)))
        return sendLocalMessage(reply, 409, 'Approval', 'This request was already answered or has expired.')
      return reply.redirect(`/ui/approvals/${request.params.id}`, 303)
    },
  )
}
