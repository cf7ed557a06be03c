import type { App } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import {
  type Holder,
  placeHold,
  releaseHold,
  type RetentionDeps,
  retentionView,
  setPolicy,
} from './service.ts'
import { Id, membershipOf, Nullable, Params, route, sessionOf } from '../../http/index.ts'

const Period = Type.Union([
  Type.Integer({ description: 'seconds' }),
  Type.String({ minLength: 2, maxLength: 40, description: 'an ISO 8601 duration: P30D, PT36H, P4W' }),
])
const Kept = Type.Object({ seconds: Type.Integer(), duration: Type.String() })
const Hold = Type.Object({
  id: Type.String(),
  org_id: Type.String(),
  engagement_id: Nullable(Type.String()),
  scope: Type.Union([Type.Literal('organization'), Type.Literal('engagement')]),
  reason_sha256: Type.String(),
  placed_by: Type.Union([Type.Literal('operator'), Type.Literal('owner')]),
  placed_at: Type.String(),
  receipt_id: Type.String(),
  active: Type.Boolean(),
  released_at: Nullable(Type.String()),
  released_by: Nullable(Type.Union([Type.Literal('operator'), Type.Literal('owner')])),
  release_receipt_id: Nullable(Type.String()),
})
const Retention = Type.Object({
  org_id: Type.String(),
  policy: Type.Object({
    tasks: Kept,
    files: Kept,
    events: Kept,
    erase_on_owner_deletion: Type.Boolean({
      description:
        'the organization is erased (POST /api/clients/erase’s rules) when the idp deletes its last owner',
    }),
    is_default: Type.Boolean(),
    updated_at: Nullable(Type.String()),
  }),
  defaults: Type.Object({ tasks_s: Type.Integer(), files_s: Type.Integer(), events_s: Type.Integer() }),
  bounds: Type.Object({ min_s: Type.Integer(), max_s: Type.Integer() }),
  holds: Type.Array(Hold),
})
const OrgQuery = Type.Object(
  { org_id: Type.Optional({ ...Id, description: 'operators: another organization' }) },
  { additionalProperties: false },
)
const Reason = Type.String({ minLength: 1, maxLength: 2000 })

/** Retention policy and legal holds: GET/POST /api/retention, POST /api/retention/hold, …/{id}/release. */
export function retentionRoutes(app: App, deps: RetentionDeps) {
  const tags = ['retention']
  const operator = (request: FastifyRequest) => deps.orgs.isOperator(sessionOf(request))
  /** The organization acted on: the member's own, or (operators only) the one named, which must exist. */
  const targetOf = async (request: FastifyRequest, named: string | undefined) => {
    const own = membershipOf(request).orgId
    if (named === undefined || named === own) return own
    if (!operator(request) || (await deps.orgs.orgs([named])).length === 0)
      throw rentalError('org_not_found', `no organization ${named}`)
    return named
  }
  /**
   * A hold is placed or released by an operator (for any organization), or by the organization's
   * owner (`retention:hold`, the route's permission) for its own data.
   */
  const holderOf = async (request: FastifyRequest, named?: string): Promise<Holder> => {
    const orgId = await targetOf(request, named)
    if (operator(request)) return { orgId, actor: operatorActor(request), as: 'operator' }
    return { orgId, actor: actorOfRequest(request), as: 'owner' }
  }
  app.get(
    '/api/retention',
    {
      ...route.session('retention:read'),
      schema: {
        summary:
          'The organization’s retention policy, its bounds and defaults, and its legal holds (newest first)',
        tags,
        querystring: OrgQuery,
        response: { 200: Retention },
      },
    },
    async (request) => retentionView(deps, await targetOf(request, request.query.org_id)),
  )
  app.post(
    '/api/retention',
    {
      ...route.csrf('retention:write'),
      schema: {
        summary: 'Sets how long task texts and outputs, files and events are kept (the ones not given stay)',
        description:
          'Each period is whole seconds or an ISO 8601 duration of weeks, days, hours, minutes and seconds, from 1 day to 3650 days. Receipts, journal and money rows are kept regardless.',
        tags,
        body: Type.Object(
          {
            tasks: Type.Optional(Period),
            files: Type.Optional(Period),
            events: Type.Optional(Period),
            erase_on_owner_deletion: Type.Optional(
              Type.Boolean({
                description:
                  'erase the organization when the idp deletes its last owner (user.deleted); refused as erasure is (a hold, open disputes, escrows owed)',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Retention },
      },
    },
    async (request) => setPolicy(deps, membershipOf(request).orgId, actorOfRequest(request), request.body),
  )
  app.post(
    '/api/retention/hold',
    {
      ...route.csrf('retention:hold'),
      schema: {
        summary:
          'Places a legal hold over the organization’s data, or one engagement’s: nothing of it is deleted until released',
        description:
          'By the organization’s owner, or an operator (who may name another organization with `org_id`). The reason is kept only as its SHA-256, in the `data.retention.hold` receipt.',
        tags,
        body: Type.Object(
          { reason: Reason, engagement_id: Type.Optional(Id), org_id: Type.Optional(Id) },
          { additionalProperties: false },
        ),
        response: { 201: Hold },
      },
    },
    async (request, reply) => {
      const holder = await holderOf(request, request.body.org_id)
      return reply.code(201).send(await placeHold(deps, holder, request.body))
    },
  )
  app.post(
    '/api/retention/hold/:id/release',
    {
      ...route.csrf('retention:hold'),
      schema: {
        summary: 'Releases a legal hold (once); deletion resumes at the retention job’s next run',
        description:
          'An operator releases any hold; the organization’s owner only one an owner placed. The release is receipted as `data.retention.hold` (`hold: released`).',
        tags,
        params: Params,
        body: Type.Object({ reason: Type.Optional(Reason) }, { additionalProperties: false }),
        response: { 200: Hold },
      },
    },
    async (request) => releaseHold(deps, await holderOf(request), request.params.id, request.body),
  )
}
