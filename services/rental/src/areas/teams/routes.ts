import { type App, Fils, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import type { RecordService } from '../record/index.ts'
import { chainOf, endTeam } from './chain.ts'
import { teamHopA2aRoutes } from './a2a-routes.ts'
import { createTeam, hireTeam, teamDetail, type TeamDeps, teamList, teamTask, teamView } from './service.ts'
import { clientOf, Did, Id, Nullable, orgOf, Params, route } from '../../http/index.ts'

const Bps = Type.Integer({ minimum: 0, maximum: 10_000, description: 'basis points (10000 = 100 %)' })
const BudgetFils = (description: string) => Fils({ minimum: 0, maximum: 1_000_000_000, description })
const Member = Type.Object(
  {
    agent_did: Did,
    share_bps: Bps,
    hop_fils: Type.Optional(BudgetFils('what a hop to this member costs the task budget')),
  },
  { additionalProperties: false },
)
const Rule = Type.Object(
  { from: Did, to: Type.Array(Did, { maxItems: 20 }) },
  { additionalProperties: false },
)
const Terms = Type.Object({
  members: Type.Array(
    Type.Object({ agent_did: Type.String(), share_bps: Type.Integer(), hop_fils: Type.Integer() }),
  ),
  delegation: Type.Array(Type.Object({ from: Type.String(), to: Type.Array(Type.String()) })),
  max_depth: Type.Integer(),
  task_budget_fils: Type.Integer(),
})
const Team = Type.Object({
  id: Type.String(),
  name: Type.String(),
  state: Type.Union([Type.Literal('draft'), Type.Literal('hired'), Type.Literal('ended')]),
  lead_did: Type.String(),
  job_id: Type.String(),
  terms: Terms,
  terms_hash: Type.String(),
  engagement_id: Nullable(Type.String()),
  created_at: Type.String(),
  hired_at: Nullable(Type.String()),
  ended_at: Nullable(Type.String()),
})
const Any = Type.Record(Type.String(), Type.Unknown())
const TaskParams = Type.Object({ id: Id, task_id: Id })

/** Teams: a lead and members bound by terms, one engagement on the lead, tasks delegated hop by hop. */
export function teamRoutes(app: App, deps: TeamDeps & { record: RecordService }) {
  const tags = ['teams']
  app.post(
    '/api/teams',
    {
      ...route.csrf('teams:write'),
      schema: {
        summary: 'Creates a team: a lead agent and members with the team terms',
        description:
          'Shares are basis points of the price released to the lead (at most 10000 together); `delegation` (default: the lead to every member) says who may delegate to whom; `max_depth` bounds the hops from the lead; `task_budget_fils` bounds the sum of `hop_fils` of a task’s hops. No lead, a duplicate member, the lead among its members, shares over 100 %: 400.',
        tags,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            lead_did: Did,
            job_id: Id,
            members: Type.Array(Member, { minItems: 1, maxItems: 20 }),
            delegation: Type.Optional(Type.Array(Rule, { maxItems: 21 })),
            max_depth: Type.Integer({ minimum: 0, maximum: 5 }),
            task_budget_fils: BudgetFils('AED fils'),
          },
          { additionalProperties: false },
        ),
        response: { 201: Team },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createTeam(deps, orgOf(request), request.body, actorOfRequest(request))),
  )
  app.get(
    '/api/teams',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'The organization’s teams, newest first',
        tags,
        querystring: pageQuery(),
        response: {
          200: Type.Object({
            teams: Type.Array(Team),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => teamList(deps, orgOf(request), pageOf(request.query)),
  )
  app.get(
    '/api/teams/:id',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'A team with its terms, state and engagement',
        tags,
        params: Params,
        response: { 200: Team },
      },
    },
    async (request) => teamView(await teamDetail(deps, orgOf(request), request.params.id)),
  )
  app.post(
    '/api/teams/:id/hire',
    {
      ...route.csrf('teams:write'),
      schema: {
        summary: 'Hires the team: one engagement on the lead, the team terms bound into its SLA body',
        description:
          'Answers as POST /api/engagements does (the pending engagement and its package, whose SLA body has `team`); sign it at POST /api/engagements/{id}/signatures. Once: a hired or ended team is 409 `team_already_hired`.',
        tags,
        params: Params,
        body: Type.Object({ client_did: Type.Optional(Did) }, { additionalProperties: false }),
        response: { 200: Type.Object({ team: Team, engagement: Any, package: Any }) },
      },
    },
    async (request) =>
      hireTeam(deps, clientOf(request), request.params.id, request.body, actorOfRequest(request)),
  )
  app.post(
    '/api/teams/:id/tasks',
    {
      ...route.csrf('tasks:write'),
      schema: {
        summary: 'A team task: sent to the lead, which delegates to members through the rental',
        description:
          'A task of the team’s engagement (escrow, approvals and capacity as POST /api/tasks); the lead’s A2A message carries `svc_team_card_url` (the delegation endpoint’s A2A card) and `svc_team_token`, the credential of the task’s root hop.',
        tags,
        params: Params,
        body: Type.Object(
          { text: Type.String({ minLength: 1, maxLength: 100_000 }), async: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            team_id: Type.String(),
            task: Any,
            escrow: Nullable(Any),
            message: Type.Optional(Type.String()),
          }),
        },
      },
    },
    async (request) =>
      teamTask(deps, orgOf(request), request.params.id, request.body, actorOfRequest(request)),
  )
  app.get(
    '/api/teams/:id/tasks/:task_id/chain',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'The delegation tree of a team task: each hop’s agent, hashes, signature, receipt and state',
        tags,
        params: TaskParams,
        response: { 200: Any },
      },
    },
    async (request) => chainOf(deps, orgOf(request), request.params.id, request.params.task_id),
  )
  app.post(
    '/api/teams/:id/end',
    {
      ...route.csrf('teams:write'),
      schema: {
        summary: 'Ends the team: its engagement ended, each member paid its share once',
        tags,
        params: Params,
        response: { 200: Any },
      },
    },
    async (request) => endTeam(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
  teamHopA2aRoutes(app, deps)
}
