import { type App, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import {
  agentRatings,
  agentReferences,
  engagementReference,
  publishReference,
  type RatingDeps,
  type Rater,
  rateTask,
} from './service.ts'
import { AgentParams, Nullable, orgOf, Params, route } from '../../http/index.ts'

const Score = Type.Integer({ minimum: 1, maximum: 5 })
const Distribution = Type.Object({
  1: Type.Integer(),
  2: Type.Integer(),
  3: Type.Integer(),
  4: Type.Integer(),
  5: Type.Integer(),
})
const Rating = Type.Object({
  id: Type.String(),
  task_id: Type.String(),
  engagement_id: Type.String(),
  agent_did: Type.String(),
  score: Score,
  comment: Nullable(Type.String()),
  receipt: Type.Object({
    id: Type.String(),
    leaf_hash: Type.String({ description: 'the task.completed receipt’s RFC 9162 leaf hash (base64)' }),
  }),
  edits: Type.Integer(),
  editable_until: Type.String(),
  created_at: Type.String(),
  updated_at: Type.String(),
})
const Reference = Type.Object({
  engagement_id: Type.String(),
  agent_did: Type.String(),
  statement: Type.String(),
  show_organization: Type.Boolean(),
  version: Type.Integer(),
  created_at: Type.String(),
  updated_at: Type.String(),
})
const Paged = { total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() }

/** Ratings of tasks and references of engagements; every client reads an agent's. */
export function ratingsRoutes(app: App, deps: RatingDeps) {
  const tags = ['ratings']
  const rater = (request: FastifyRequest): Rater => ({
    orgId: orgOf(request),
    actor: actorOfRequest(request),
  })
  app.post(
    '/api/tasks/:id/rating',
    {
      ...route.csrf('ratings:write'),
      schema: {
        summary:
          'Rates a completed task of the organization (1 to 5, a comment), once; edits within the window',
        description:
          'Bound to the task’s `task.completed` receipt (its leaf hash is kept with the rating): a task not completed with its receipt is 409 `task_not_rateable`. A second rating is 409 `already_rated`; `edit: true` replaces the score and comment until `editable_until` (RENTAL_RATING_EDIT_WINDOW_S after the rating), each edit an event (`rating.edited`); after it, 409 `rating_edit_closed`.',
        tags,
        params: Params,
        body: Type.Object(
          {
            score: Score,
            comment: Type.Optional(Type.String({ maxLength: 1000 })),
            edit: Type.Optional(
              Type.Boolean({ description: 'change the existing rating (within the window)' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Rating },
      },
    },
    async (request) => rateTask(deps, rater(request), request.params.id, request.body),
  )
  app.get(
    '/api/agents/:did/ratings',
    {
      ...route.session('record:read'),
      schema: {
        summary: 'The agent’s ratings: count, mean, distribution and the ratings newest first (paged)',
        description:
          'Each rating carries the leaf hash of the receipt of the task it rates; not who rated it.',
        tags,
        params: AgentParams,
        querystring: Type.Object(pageQuery().properties, { additionalProperties: false }),
        response: {
          200: Type.Object({
            agent_did: Type.String(),
            count: Type.Integer(),
            mean: Nullable(Type.Number()),
            distribution: Distribution,
            ratings: Type.Array(
              Type.Object({
                score: Score,
                comment: Nullable(Type.String()),
                leaf_hash: Type.String(),
                edited: Type.Boolean(),
                created_at: Type.String(),
                updated_at: Type.String(),
              }),
            ),
            ...Paged,
          }),
        },
      },
    },
    async (request) => agentRatings(deps, request.params.did, pageOf(request.query)),
  )
  app.get(
    '/api/engagements/:id/reference',
    {
      ...route.session('engagements:read'),
      schema: {
        summary:
          'The organization’s reference of its engagement (null before one), and whether it may publish one',
        tags,
        params: Params,
        response: {
          200: Type.Object({
            engagement_id: Type.String(),
            completed_tasks: Type.Integer(),
            may_publish: Type.Boolean(),
            reference: Nullable(Reference),
          }),
        },
      },
    },
    async (request) => engagementReference(deps, orgOf(request), request.params.id),
  )
  app.post(
    '/api/engagements/:id/reference',
    {
      ...route.csrf('ratings:write'),
      schema: {
        summary: 'Publishes the organization’s reference of its engagement (again: replaces it, recorded)',
        description:
          'Only after at least one completed task of the engagement (else 409 `reference_not_allowed`). `show_organization`: consent to show the organization’s name with it; anonymous otherwise.',
        tags,
        params: Params,
        body: Type.Object(
          {
            statement: Type.String({ minLength: 1, maxLength: 2000 }),
            show_organization: Type.Boolean(),
          },
          { additionalProperties: false },
        ),
        response: { 200: Reference },
      },
    },
    async (request) => publishReference(deps, rater(request), request.params.id, request.body),
  )
  app.get(
    '/api/agents/:did/references',
    {
      ...route.session('record:read'),
      schema: {
        summary:
          'The agent’s published references, newest first (the organization named only with its consent)',
        tags,
        params: AgentParams,
        querystring: Type.Object(pageQuery().properties, { additionalProperties: false }),
        response: {
          200: Type.Object({
            agent_did: Type.String(),
            references: Type.Array(
              Type.Object({
                statement: Type.String(),
                organization: Nullable(Type.Object({ name: Nullable(Type.String()) })),
                anonymous: Type.Boolean(),
                version: Type.Integer(),
                published_at: Type.String(),
                updated_at: Type.String(),
              }),
            ),
            ...Paged,
          }),
        },
      },
    },
    async (request) => agentReferences(deps, request.params.did, pageOf(request.query)),
  )
}
