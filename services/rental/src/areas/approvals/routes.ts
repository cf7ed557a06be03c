import { type App, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import { type ApprovalDeps, approvalDetail, approvalList, decide } from './service.ts'
import { membershipOf, Nullable, orgOf, route } from '../../http/index.ts'

const State = Type.Union([
  Type.Literal('pending'),
  Type.Literal('approved'),
  Type.Literal('rejected'),
  Type.Literal('expired'),
  Type.Literal('canceled'),
])

export const Approval = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('policy'), Type.Literal('agent_input'), Type.Literal('tool_call')]),
  action_id: Nullable(Type.String({ description: 'tool_call: the connect action it holds' })),
  state: State,
  task_id: Type.String(),
  engagement_id: Type.String(),
  price_fils: Type.Integer(),
  currency: Type.String(),
  text_sha256: Type.String(),
  text_preview: Type.String({ description: 'the first 200 characters of the task text' }),
  question: Nullable(Type.String({ description: 'agent_input: what the agent asked' })),
  agent_state: Nullable(Type.Union([Type.Literal('input-required'), Type.Literal('auth-required')])),
  requested_by: Type.Object({ type: Type.String(), id: Nullable(Type.String()) }),
  requested_at: Type.String(),
  expires_at: Type.String(),
  decided_by: Nullable(Type.String({ description: 'the member who approved or rejected' })),
  decided_at: Nullable(Type.String()),
  note: Nullable(Type.String()),
  receipt: Nullable(Type.Object({ id: Type.String(), leaf_hash: Nullable(Type.String()) })),
})

/** Approval ids are checked before any query: `apr_` and 16 base64url characters. */
const ApprovalId = Type.Object(
  { id: Type.String({ pattern: '^apr_[A-Za-z0-9_-]{16}$', maxLength: 20 }) },
  { additionalProperties: false },
)
const Note = Type.Optional(Type.String({ maxLength: 1000 }))

/** A decision's body is optional: none is `{}` (validated as such, after the permission check). */
const bodyOptional = {
  preValidation: async (request: FastifyRequest) => {
    request.body ??= {}
  },
}

export function approvalRoutes(app: App, deps: ApprovalDeps) {
  const tags = ['approvals']
  app.get(
    '/api/approvals',
    {
      ...route.session('approvals:read'),
      schema: {
        summary: 'The organization’s approvals, newest first, filtered by state',
        description: 'A pending approval past its expires_at is listed as expired, swept or not.',
        tags,
        querystring: Type.Object(
          { ...pageQuery().properties, state: Type.Optional(State) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            approvals: Type.Array(Approval),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      approvalList(deps, orgOf(request), { ...pageOf(request.query), state: request.query.state }),
  )
  app.get(
    '/api/approvals/:id',
    {
      ...route.session('approvals:read'),
      schema: {
        summary: 'An approval: the task it holds, its state and decision',
        tags,
        params: ApprovalId,
        response: { 200: Approval },
      },
    },
    async (request) => approvalDetail(deps, orgOf(request), request.params.id),
  )
  app.post(
    '/api/approvals/:id/approve',
    {
      ...route.csrf('approvals:write'),
      ...bodyOptional,
      schema: {
        summary: 'Approves: the task runs (an agent_input answer is sent to the agent); 409 unless pending',
        description:
          '`text` answers the agent’s question (agent_input approvals only; "approved" when omitted). ' +
          'Approving twice, or an expired or canceled approval, is 409 approval_not_pending naming its state.',
        tags,
        params: ApprovalId,
        body: Type.Object(
          { note: Note, text: Type.Optional(Type.String({ minLength: 1, maxLength: 20_000 })) },
          { additionalProperties: false },
        ),
        response: { 200: Approval },
      },
    },
    async (request) =>
      decide(
        deps,
        orgOf(request),
        request.params.id,
        { approve: true, note: request.body.note, text: request.body.text },
        { memberId: membershipOf(request).memberId, actor: actorOfRequest(request) },
      ),
  )
  app.post(
    '/api/approvals/:id/reject',
    {
      ...route.csrf('approvals:write'),
      ...bodyOptional,
      schema: {
        summary: 'Rejects: the task ends as rejected, never charged; 409 unless pending',
        tags,
        params: ApprovalId,
        body: Type.Object({ note: Note }, { additionalProperties: false }),
        response: { 200: Approval },
      },
    },
    async (request) =>
      decide(
        deps,
        orgOf(request),
        request.params.id,
        { approve: false, note: request.body.note },
        { memberId: membershipOf(request).memberId, actor: actorOfRequest(request) },
      ),
  )
}
