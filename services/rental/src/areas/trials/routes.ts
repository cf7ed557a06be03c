import { type App, LangQuery, Money, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest } from '../events/index.ts'
import { TaskSchema as Task } from '../tasks/index.ts'
import {
  type Caller,
  convertTrial,
  startTrial,
  type TrialDeps,
  trialDetail,
  trialList,
  trialTask,
} from './service.ts'
import { Body, clientOf, Did, Id, Nullable, Params, route } from '../../http/index.ts'

const State = Type.Union([
  Type.Literal('active'),
  Type.Literal('exhausted'),
  Type.Literal('expired'),
  Type.Literal('converted'),
])

const Trial = Type.Object({
  id: Type.String(),
  state: State,
  listing: Type.Object({ id: Type.String(), title: Type.String(), agent_did: Type.String(), price: Money }),
  agent_did: Type.String(),
  client_did: Nullable(Type.String()),
  tasks_allowed: Type.Integer(),
  tasks_used: Type.Integer(),
  tasks_left: Type.Integer(),
  ends_at: Type.String({ description: 'the end of the trial’s window' }),
  engagement_id: Nullable(Type.String({ description: 'the engagement it converted into' })),
  converted_at: Nullable(Type.String()),
  created_at: Type.String(),
})
const TrialWithTasks = Type.Object({
  ...Trial.properties,
  tasks: Type.Array(
    Type.Object({
      id: Type.String(),
      state: Task.properties.state,
      receipt_id: Nullable(Type.String()),
      receipt_leaf_hash: Nullable(Type.String()),
      created_at: Type.String(),
      completed_at: Nullable(Type.String()),
    }),
  ),
})

/** Trials of market listings: started and converted with engagements:write, tasks with tasks:write. */
export function trialRoutes(app: App, sessions: RentalContext['sessions'], deps: TrialDeps) {
  const tags = ['trials']
  const callerOf = (request: FastifyRequest): Caller => ({
    ...clientOf(request),
    actor: actorOfRequest(request),
  })
  app.post(
    '/api/trials',
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary: 'Starts a trial of a market listing: a few free tasks within a window, no escrow, no charge',
        description:
          'The listing’s SLA terms `trial_tasks` (1–20) and `trial_days` (1–30) set it; else 3 tasks in 7 days. One live trial per organization and listing (409 `trial_exists` naming it); an unavailable listing: 409 `listing_unavailable`.',
        tags,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object(
          { listing_id: Id, client_did: Type.Optional(Did) },
          { additionalProperties: false },
        ),
        response: { 201: TrialWithTasks },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await startTrial(deps, callerOf(request), request.body, moneyLocaleOf(request))),
  )
  app.get(
    '/api/trials',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'The organization’s trials, newest first, in a state when asked',
        tags,
        querystring: Type.Object(
          { ...pageQuery().properties, ...LangQuery().properties, state: Type.Optional(State) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            trials: Type.Array(Trial),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      trialList(
        deps,
        clientOf(request).orgId,
        request.query.state,
        pageOf(request.query),
        moneyLocaleOf(request),
      ),
  )
  app.get(
    '/api/trials/:id',
    {
      ...route.session('engagements:read'),
      schema: {
        summary:
          'A trial: its listing, tasks used and left, window end, state, and its tasks with their receipts',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: TrialWithTasks },
      },
    },
    async (request) => trialDetail(deps, clientOf(request).orgId, request.params.id, moneyLocaleOf(request)),
  )
  app.post(
    '/api/trials/:id/tasks',
    {
      ...route.csrf('tasks:write'),
      schema: {
        summary: 'A free task of the trial, run as every task is and receipted (`trial: true`)',
        description:
          'Counted against the trial atomically. 409 `trial_exhausted`, `trial_expired` or `trial_converted` when it takes no more.',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object(
          { text: Type.String({ minLength: 1, maxLength: 20_000 }), async: Type.Optional(Type.Boolean()) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ task: Task, trial: TrialWithTasks, message: Type.Optional(Type.String()) }),
        },
      },
    },
    async (request) =>
      trialTask(deps, callerOf(request), request.params.id, request.body, moneyLocaleOf(request)),
  )
  app.post(
    '/api/trials/:id/convert',
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary: 'Converts the trial: the pending engagement and offer package, exactly as hiring makes them',
        description:
          'The SLA body names the trial (`trial`: its id, tasks used, tasks and receipts). At most once: converting a converted trial (concurrently or later) answers the same engagement.',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object({ job_id: Id, client_did: Type.Optional(Did) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ trial: TrialWithTasks, engagement: Body, package: Body }),
        },
      },
    },
    async (request) =>
      convertTrial(deps, callerOf(request), request.params.id, request.body, moneyLocaleOf(request)),
  )
}
