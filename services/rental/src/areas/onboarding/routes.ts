import type { App } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import {
  type Caller,
  type OnboardingDeps,
  onboardingStatus,
  reviewKyb,
  screenAgent,
  submitKyb,
} from './service.ts'
import { Id, Nullable, orgOf, route, sessionOf } from '../../http/index.ts'

/** The idp's own pattern for a declared domain (a host name, a port allowed), so it never refuses one we took. */
const Domain = Type.String({
  pattern: '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}(:[0-9]{1,5})?$',
  description: 'the business’s domain, where it publishes the owner document',
})
const Text = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S' })
const AgentDid = Type.String({ pattern: '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$', maxLength: 300 })

const Kyb = Type.Object({
  id: Type.String(),
  state: Type.Union([
    Type.Literal('awaiting_domain'),
    Type.Literal('pending_review'),
    Type.Literal('approved'),
    Type.Literal('rejected'),
  ]),
  domain: Type.String(),
  entity_name: Type.String(),
  jurisdiction: Type.String(),
  registration: Type.String(),
  domain_verified: Type.Boolean(),
  problems: Type.Array(Type.String(), { description: 'why the domain did not verify (empty once it did)' }),
  publish_at: Nullable(Type.String({ description: 'where the domain publishes the owner document' })),
  owner_document: Nullable(
    Type.Record(Type.String(), Type.Unknown(), { description: 'the JSON to publish at publish_at' }),
  ),
  checked_at: Nullable(Type.String()),
  review: Nullable(
    Type.Object({
      decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
      reason: Nullable(Type.String()),
      reviewed_at: Type.String(),
    }),
  ),
  receipt_id: Nullable(Type.String({ description: 'the last kyb.submitted or kyb.reviewed receipt' })),
  created_at: Type.String(),
  updated_at: Type.String(),
})
const Kya = Type.Object({
  id: Type.String(),
  agent_did: Type.String(),
  ok: Type.Boolean(),
  hits: Type.Array(Type.String()),
  history_count: Type.Integer(),
  history_error: Nullable(Type.String()),
  idp_receipt: Type.String({ description: 'leaf hash of the idp’s kya.screening receipt on the ledger' }),
  created_at: Type.String(),
})

export function onboardingRoutes(app: App, deps: OnboardingDeps & { orgs: Pick<OrgService, 'isOperator'> }) {
  const tags = ['onboarding']
  const caller = (request: FastifyRequest): Caller => ({
    orgId: orgOf(request),
    actor: actorOfRequest(request),
  })
  app.post(
    '/api/onboarding/kyb',
    {
      ...route.csrf('onboarding:write'),
      schema: {
        summary: 'Submits the organization’s business check; the idp checks its domain at once',
        description:
          'The idp declares the business and answers the owner document the domain publishes at `publish_at`; its domain is checked at once. Verified: `pending_review` (an operator decides); else `awaiting_domain` with the problems, and submitting again checks again. 409 `kyb_state` while a check is pending review or once approved.',
        tags,
        body: Type.Object(
          {
            domain: Domain,
            entity_name: Text(200),
            jurisdiction: Text(100),
            registration: Text(100),
          },
          { additionalProperties: false },
        ),
        response: { 200: Kyb },
      },
    },
    async (request) => submitKyb(deps, caller(request), request.body),
  )
  app.get(
    '/api/onboarding',
    {
      ...route.session('onboarding:read'),
      schema: {
        summary: 'The organization’s onboarding: its latest business check, agent screenings and the gates',
        tags,
        response: {
          200: Type.Object({
            organization_id: Type.String(),
            kyb_required: Type.Boolean({
              description: 'whether listings and hires above hire_limit_fils need an approved check',
            }),
            hire_limit_fils: Type.Integer(),
            kyb_approved: Type.Boolean(),
            kyb: Nullable(Kyb),
            kya: Type.Array(Kya, { description: 'the latest 50 screenings, newest first' }),
          }),
        },
      },
    },
    async (request) => onboardingStatus(deps, orgOf(request)),
  )
  app.post(
    '/api/onboarding/kya/:agent_did',
    {
      ...route.csrf('onboarding:write'),
      schema: {
        summary:
          'Screens an agent through the idp (deny list and ledger history), its kya.screening receipt named',
        tags,
        params: Type.Object({ agent_did: AgentDid }),
        body: Type.Object(
          {
            owner: Type.Optional(
              Type.String({ minLength: 1, maxLength: 300, description: 'who the agent says owns it' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Kya },
      },
    },
    async (request) => screenAgent(deps, caller(request), request.params.agent_did, request.body),
  )
  app.post(
    '/api/onboarding/kyb/:id/review',
    {
      ...route.csrf('onboarding:write'),
      schema: {
        summary: 'An operator approves a verified business check or rejects an open one with a reason',
        description:
          'Operators only (another organization’s check is 404 for anyone else). Approve: only `pending_review` (409 `kyb_state` naming the state otherwise); reject: `awaiting_domain` or `pending_review`, with a reason (400 `reason_required`). Receipted as `kyb.reviewed`.',
        tags,
        params: Type.Object({ id: Id }),
        body: Type.Object(
          {
            decision: Type.Union([Type.Literal('approve'), Type.Literal('reject')]),
            reason: Type.Optional(Type.String({ maxLength: 1000 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Kyb },
      },
    },
    async (request) => {
      const operator = deps.orgs.isOperator(sessionOf(request))
      return reviewKyb(
        deps,
        {
          orgId: orgOf(request),
          operator,
          actor: operator ? operatorActor(request) : actorOfRequest(request),
        },
        request.params.id,
        request.body,
      )
    },
  )
}
