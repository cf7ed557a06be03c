import { Readable } from 'node:stream'
import { type App, IdempotencyKeyHeader, PageQuery, pageOf } from '@svc/kit'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import { exportableBatch, exportLines, itemList } from './export.ts'
import {
  type BatchDeps,
  batchDetail,
  batchList,
  createBatch,
  DEFAULT_CONCURRENCY,
  MAX_CONCURRENCY,
  MAX_ITEMS,
} from './service.ts'
import { idempotent, orgOf, route } from '../../http/index.ts'

/** A task's text bound (POST /api/tasks). */
const MAX_TEXT = 20_000
/**
 * The create route's body limit: 1000 items of the longest text in ASCII, with room for JSON;
 * a bound, not the kit's 1 MiB default, which a full batch would pass.
 */
export const BATCH_BODY_LIMIT = 24 * 1024 * 1024

const Text = Type.String({ minLength: 1, maxLength: MAX_TEXT })
const Nullable = <T extends import('typebox').TSchema>(t: T) => Type.Union([t, Type.Null()])
const Count = Type.Integer({ minimum: 0 })
const Batch = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  name: Nullable(Type.String()),
  state: Type.Union([
    Type.Literal('running'),
    Type.Literal('completed'),
    Type.Literal('completed_with_errors'),
    Type.Literal('canceled'),
  ]),
  concurrency: Type.Integer(),
  total: Type.Integer(),
  counts: Type.Object({ queued: Count, running: Count, completed: Count, failed: Count, canceled: Count }),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  finished_at: Nullable(Type.String()),
})
const BatchId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

export function batchRoutes(app: App, deps: BatchDeps) {
  const tags = ['batches']
  app.post(
    '/api/batches',
    {
      ...route.csrf('tasks:write'),
      ...idempotent(deps.db, 'batch-create'),
      bodyLimit: BATCH_BODY_LIMIT,
      schema: {
        summary: `Up to ${MAX_ITEMS} task texts under one engagement, run as tasks with bounded concurrency`,
        description:
          'Each item becomes one task (actor: the batch), at most `concurrency` at a time. Idempotent with an Idempotency-Key: a replay answers the first answer.',
        tags,
        headers: IdempotencyKeyHeader,
        body: Type.Object(
          {
            engagement_id: Type.String({ minLength: 1, maxLength: 100 }),
            items: Type.Array(
              Type.Union([Text, Type.Object({ text: Text }, { additionalProperties: false })]),
              {
                minItems: 1,
                maxItems: MAX_ITEMS,
                description: `1 to ${MAX_ITEMS} task texts, each a string or {text}`,
              },
            ),
            concurrency: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: MAX_CONCURRENCY,
                description: `tasks running at once (default ${DEFAULT_CONCURRENCY})`,
              }),
            ),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: Batch },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createBatch(deps, orgOf(request), request.body, actorOfRequest(request))),
  )
  app.get(
    '/api/batches',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'The organization’s batches, newest first',
        tags,
        querystring: PageQuery,
        response: {
          200: Type.Object({ batches: Type.Array(Batch), limit: Type.Integer(), offset: Type.Integer() }),
        },
      },
    },
    async (request) => batchList(deps, orgOf(request), pageOf(request.query)),
  )
  app.get(
    '/api/batches/:id',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'A batch: its state, counts per item state, start and finish',
        tags,
        params: BatchId,
        response: { 200: Batch },
      },
    },
    async (request) => batchDetail(deps, orgOf(request), request.params.id),
  )
  app.get(
    '/api/batches/:id/items',
    {
      ...route.session('tasks:read'),
      schema: {
        summary:
          'A page of the batch’s items in order: state, task (once made), the text’s first words and error',
        tags,
        params: BatchId,
        querystring: Type.Object(
          {
            from: Type.Integer({ minimum: 0, default: 0, description: 'the first item index' }),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            items: Type.Array(
              Type.Object({
                index: Type.Integer(),
                state: Type.Union([
                  Type.Literal('queued'),
                  Type.Literal('running'),
                  Type.Literal('completed'),
                  Type.Literal('failed'),
                  Type.Literal('canceled'),
                ]),
                task_id: Nullable(Type.String()),
                input_preview: Nullable(
                  Type.String({
                    description:
                      'the item’s text (its task’s input) in its first words, at most 80 characters, while kept',
                  }),
                ),
                error: Nullable(Type.String()),
              }),
            ),
            next_from: Nullable(Type.Integer({ description: 'the next page’s `from`; null: no more' })),
          }),
        },
      },
    },
    async (request) =>
      itemList(deps, orgOf(request), request.params.id, request.query.from, request.query.limit),
  )
  app.get(
    '/api/batches/:id/export',
    {
      ...route.session('tasks:read'),
      schema: {
        summary:
          'The batch’s items as JSON Lines or CSV: state, task, output while kept, receipt leaf hash, error',
        description:
          "One row per item, in item order. CSV (RFC 4180) has a header row; a field starting with =, +, -, @, tab or CR is prefixed with ' (OWASP CSV injection).",
        tags,
        params: BatchId,
        querystring: Type.Object(
          { format: Type.Union([Type.Literal('jsonl'), Type.Literal('csv')], { default: 'jsonl' }) },
          { additionalProperties: false },
        ),
        produces: ['application/jsonl', 'text/csv'],
        response: {
          200: {
            description: 'the rows, streamed',
            content: {
              'application/jsonl': { schema: Type.String() },
              'text/csv': { schema: Type.String() },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const orgId = orgOf(request)
      const batch = await exportableBatch(deps, orgId, request.params.id)
      const { format } = request.query
      reply
        .header(
          'content-type',
          format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/jsonl; charset=utf-8',
        )
        .header('content-disposition', `attachment; filename="batch-${batch.id}.${format}"`)
        .header('cache-control', 'no-store')
      // streamed, page by page: the declared string type is the body as a whole
      return reply.send(Readable.from(exportLines(deps, orgId, batch.id, format)) as unknown as string)
    },
  )
}
