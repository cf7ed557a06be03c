import { type App, IdempotencyKeyHeader, LangQuery, Money, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import { cancelTaskRoute } from './cancel.ts'
import { fileHandoffRoutes, MAX_TASK_FILES } from './file-handoff.ts'
import { retryTask, taskRuns } from './runs.ts'
import { createTask, type TaskDeps } from './service.ts'
import { taskDetail, taskList } from './views.ts'
import { taskEventRoutes } from './stream.ts'
import { usageRoutes } from './usage-routes.ts'
import { Escrow, idempotent, Nullable, orgOf, route } from '../../http/index.ts'

/**
 * What names a task for a person beside its id in another area's list (executions, approvals, a
 * statement's lines), in `lang`: `TaskService.labels` answers it.
 */
export const TaskWords = {
  job_title: Nullable(Type.String({ description: 'the title of the task’s job, in `lang`' })),
  agent_name: Nullable(Type.String({ description: 'the agent’s display name, in `lang`' })),
  input_preview: Nullable(
    Type.String({ description: 'the task input’s first words (at most 80 characters) while it is kept' }),
  ),
}

export const Task = Type.Object({
  id: Type.String(),
  engagement_id: Nullable(Type.String({ description: 'null for a trial’s free task' })),
  trial_id: Nullable(Type.String({ description: 'the trial a free task belongs to (else null)' })),
  job_id: Nullable(Type.String({ description: 'the engagement’s job (null for a trial’s task)' })),
  job_title: Nullable(
    Type.String({ description: 'the job’s title in the reader’s language (lang / Accept-Language)' }),
  ),
  agent_did: Type.String(),
  agent_name: Nullable(
    Type.String({
      description: 'the agent’s display name in the reader’s language; null outside the catalogue',
    }),
  ),
  agent_version: Nullable(
    Type.String({ description: 'the agent version the task went to (null: the initial one)' }),
  ),
  state: Type.Union([
    Type.Literal('submitted'),
    Type.Literal('working'),
    Type.Literal('input-required'),
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('canceled'),
    Type.Literal('rejected'),
  ]),
  async: Type.Boolean(),
  price_fils: Type.Integer(),
  currency: Type.String(),
  price: Money,
  escrow_id: Nullable(Type.String()),
  escrow_state: Nullable(
    Type.Union(
      [
        Type.Literal('offered'),
        Type.Literal('open'),
        Type.Literal('released'),
        Type.Literal('returned'),
        Type.Literal('withdrawn'),
      ],
      { description: 'offered: to sign; open: held; released: paid; returned; withdrawn' },
    ),
  ),
  input_text: Nullable(
    Type.String({ description: 'the input, kept while the task runs and then as long as its output' }),
  ),
  input_preview: Nullable(Type.String({ description: 'the input’s first words (at most 80 characters)' })),
  input_sha256: Type.String(),
  output: Nullable(Type.Object({ text: Nullable(Type.String()), data: Type.Unknown() })),
  output_sha256: Nullable(Type.String()),
  output_expires_at: Nullable(Type.String()),
  output_expired: Type.Boolean(),
  message: Type.Optional(Type.String()),
  receipt: Nullable(
    Type.Object({
      id: Type.String(),
      leaf_hash: Nullable(Type.String()),
      ledger_index: Nullable(Type.Integer()),
    }),
  ),
  agent_result: Type.Unknown(),
  agent_signature: Nullable(Type.String()),
  error: Nullable(Type.String()),
  runs: Nullable(
    Type.Array(Type.Object({ attempt: Type.Integer(), at: Type.String(), error: Type.String() })),
  ),
  file_ids: Type.Array(Type.String(), { description: 'the engagement’s files handed to the agent' }),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  duration_ms: Nullable(
    Type.Integer({ description: 'from its start (else its creation) to its end; null while it runs' }),
  ),
  trace_id: Nullable(
    Type.String({ description: 'the OpenTelemetry trace the task was created in (null: tracing off)' }),
  ),
  trace_url: Nullable(
    Type.String({ description: 'the trace in the operator’s viewer (RENTAL_TRACE_URL_TEMPLATE), else null' }),
  ),
})

const Run = Type.Object({
  attempt: Type.Integer(),
  started_at: Nullable(Type.String()),
  ended_at: Nullable(Type.String()),
  outcome: Type.Union([
    Type.Literal('working'),
    Type.Literal('input-required'),
    Type.Literal('completed'),
    Type.Literal('failed'),
    Type.Literal('canceled'),
    Type.Literal('rejected'),
  ]),
  error: Nullable(Type.String()),
  agent_did: Type.String(),
})

const TaskId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

export function taskRoutes(app: App, deps: TaskDeps) {
  const tags = ['tasks']
  app.post(
    '/api/tasks',
    {
      ...route.csrf('tasks:write'),
      ...idempotent(deps.db, 'task-create'),
      schema: {
        summary: 'A task for the engagement’s agent over A2A, with the escrow body that pays for it',
        description:
          'Idempotent with an Idempotency-Key: a resend answers the first answer and makes no second task or escrow; the key with another body is 422.',
        tags,
        headers: IdempotencyKeyHeader,
        body: Type.Object(
          {
            engagement_id: Type.String({ minLength: 1, maxLength: 100 }),
            text: Type.String({ minLength: 1, maxLength: 20_000 }),
            async: Type.Optional(Type.Boolean()),
            file_ids: Type.Optional(
              Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
                maxItems: MAX_TASK_FILES,
                description:
                  'files of the engagement handed to the agent as A2A file parts (short-lived signed URLs); another engagement’s: 404 file_not_found',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ task: Task, escrow: Nullable(Escrow), message: Type.Optional(Type.String()) }),
        },
      },
    },
    async (request) => createTask(deps, orgOf(request), request.body, actorOfRequest(request)),
  )
  app.get(
    '/api/tasks',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'The signed-in client’s tasks, newest first',
        tags,
        // published with a page of 20 before the kit's one page schema: kept
        querystring: Type.Object({
          ...pageQuery({ limitDefault: 20 }).properties,
          ...LangQuery().properties,
        }),
        response: {
          200: Type.Object({ tasks: Type.Array(Task), limit: Type.Integer(), offset: Type.Integer() }),
        },
      },
    },
    async (request) =>
      taskList(deps, orgOf(request), pageOf(request.query), moneyLocaleOf(request, request.query.lang)),
  )
  app.get(
    '/api/tasks/:id',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'A task: state, receipt, and the output while it is kept',
        tags,
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Task },
      },
    },
    async (request) =>
      taskDetail(deps, orgOf(request), request.params.id, moneyLocaleOf(request, request.query.lang)),
  )
  app.post(
    '/api/tasks/:id/cancel',
    {
      ...route.csrf('tasks:write'),
      schema: {
        summary:
          'Cancels a task that has not ended (409 naming the state of one that has): no receipt, no charge',
        tags,
        params: TaskId,
        response: { 200: Task },
      },
    },
    async (request) => cancelTaskRoute(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
  app.get(
    '/api/tasks/:id/runs',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'The task’s attempts: null when none failed',
        tags,
        params: TaskId,
        response: {
          200: Type.Object({
            task_id: Type.String(),
            state: Task.properties.state,
            runs: Nullable(Type.Array(Run)),
          }),
        },
      },
    },
    async (request) => taskRuns(deps, orgOf(request), request.params.id),
  )
  app.post(
    '/api/tasks/:id/retry',
    {
      ...route.csrf('tasks:write'),
      schema: {
        summary: 'A failed task run again as a new attempt, with the same escrow (paid once, on completion)',
        description:
          'Idempotent with an Idempotency-Key: a replay answers the first answer. 409 for a task that is not failed.',
        tags,
        params: TaskId,
        headers: IdempotencyKeyHeader,
        response: { 200: Task },
      },
    },
    async (request) =>
      retryTask(
        deps,
        orgOf(request),
        request.params.id,
        request.headers['idempotency-key'],
        actorOfRequest(request),
      ),
  )
  taskEventRoutes(app, deps)
  usageRoutes(app, deps)
  fileHandoffRoutes(app, deps)
}
