/**
 * The rental's A2A request handler: the SDK's `A2ARequestHandler` over the tasks area, for the
 * caller an `agt_` token names (its owner, scopes and engagements). The JSON-RPC transport and
 * the 0.3 forms come from the SDK, through the kit's Fastify adapter.
 */
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk'
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors'
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server'
import { AppError } from '@svc/kit'
import { badRequest, errorInfo, type JsonRpcErrorObject, retryInfo, rethrow } from '@svc/kit/http/a2a-jsonrpc'
import { tokenActor } from '../events/index.ts'
import type { VerifiedApiToken } from '../tokens/service.ts'
import { MAX_TASK_FILES } from '../tasks/file-handoff.ts'
import { createTask, type TaskDeps, taskIdPage } from '../tasks/service.ts'
import { taskDetail, type TaskView } from '../tasks/views.ts'
import { cancelTask } from '../tasks/cancel.ts'
import { CONCURRENCY_RETRY_AFTER_S } from '../tasks/capacity.ts'
import {
  a2aTask,
  contextOf,
  escrowOfTask,
  isTerminal,
  outputArtifact,
  rentalStateOf,
  statusOf,
} from './tasks.ts'

/** The A2A scopes of an `agt_` token's policy (areas/tokens/scopes.ts); each method needs its own. */
export const SCOPES = { read: 'tasks:read', write: 'tasks:write' } as const
type Scope = (typeof SCOPES)[keyof typeof SCOPES]

/** Custom JSON-RPC code (outside JSON-RPC's and A2A's reserved ranges) for an authorization refusal. */
export const PERMISSION_DENIED_CODE = -31403

/** The caller the route authenticated: its verified token. */
export class TokenUser implements User {
  constructor(readonly token: VerifiedApiToken) {}
  get isAuthenticated() {
    return true
  }
  get userName() {
    return this.token.owner
  }
}

/** An authorization refusal (scope or engagement outside the token's policy). */
export class PermissionDenied extends Error {
  constructor(
    message: string,
    readonly metadata: Record<string, string>,
  ) {
    super(message)
  }
}

/** A refusal of the request's parameters from a rule of the rental (unknown engagement, …). */
export class InvalidParams extends Error {
  constructor(
    message: string,
    readonly field: string,
    readonly reason: string,
  ) {
    super(message)
  }
}

/** The rental's own errors as JSON-RPC errors; the rest is left to the SDK's mapping. */
export function mapRentalError(err: unknown): JsonRpcErrorObject | undefined {
  if (err instanceof PermissionDenied)
    return {
      code: PERMISSION_DENIED_CODE,
      message: err.message,
      data: [errorInfo('PERMISSION_DENIED', err.metadata)],
    }
  if (err instanceof InvalidParams)
    return {
      code: -32602,
      message: err.message,
      data: [errorInfo(err.reason), badRequest(err.field, err.message)],
    }
  // over the engagement's capacity: A2A §3.3's system errors put "rate limit exceeded" under
  // JSON-RPC -32603 with retry guidance (google.rpc.RetryInfo: the console's Retry-After)
  if (err instanceof AppError && err.status === 429)
    return {
      code: -32603,
      message: err.message,
      data: [
        errorInfo(err.code.toUpperCase()),
        retryInfo(Number(err.headers['retry-after'] ?? CONCURRENCY_RETRY_AFTER_S)),
      ],
    }
  if (err instanceof AppError && err.status < 500)
    return {
      code: -32602,
      message: err.message,
      data: [errorInfo(err.code.toUpperCase())],
    }
  return undefined
}

const POLL_MS = 250
const STREAM_LIMIT_MS = 10 * 60_000
const ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/

function tokenOf(context: ServerCallContext, scope: Scope): VerifiedApiToken {
  const user = context.user
  if (!(user instanceof TokenUser)) throw new PermissionDenied('no API token', {})
  const { token } = user
  if (!token.scopes.includes(scope))
    throw new PermissionDenied(`the token lacks the scope ${scope}`, { requiredScope: scope })
  return token
}

const mayAct = (token: VerifiedApiToken, engagementId: string) =>
  token.engagementIds === null || token.engagementIds.includes(engagementId)

/** Runs a call, keeping what it throws for the adapter's mapping of the rental's errors. */
async function guarded<T>(context: ServerCallContext, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    return rethrow(context, err)
  }
}

const textsOf = (message: Message) =>
  message.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))

/**
 * The engagement's files the message hands the agent (`metadata.file_ids`: a list of file ids, as
 * POST /api/tasks's `file_ids`); anything else there is InvalidParams.
 */
function fileIdsOf(value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (
    !Array.isArray(value) ||
    value.length > MAX_TASK_FILES ||
    !value.every((id) => typeof id === 'string' && ID_PATTERN.test(id))
  )
    throw new InvalidParams(
      `message.metadata.file_ids must be a list of at most ${MAX_TASK_FILES} file ids`,
      'message.metadata.file_ids',
      'INVALID_FILE_IDS',
    )
  return value as string[]
}

export class RentalA2AHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: TaskDeps,
    private readonly card: () => Promise<AgentCard>,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    return this.card()
  }

  async getAuthenticatedExtendedAgentCard(
    _params: GetExtendedAgentCardRequest,
    _context: ServerCallContext,
  ): Promise<AgentCard> {
    // A2A 1.0 §3.3.4: the card declares no extended card (capabilities.extendedAgentCard false)
    throw new UnsupportedOperationError('this agent has no authenticated extended card')
  }

  /** The caller's task as an A2A Task, or TaskNotFound (another client's, or outside the token's engagements). */
  private async view(token: VerifiedApiToken, id: string): Promise<TaskView> {
    if (!ID_PATTERN.test(id)) throw new TaskNotFoundError(`no task ${id}`)
    let view: TaskView
    try {
      view = await taskDetail(this.deps, token.owner, id)
    } catch (err) {
      if (err instanceof AppError && err.status === 404) throw new TaskNotFoundError(`no task ${id}`)
      throw err
    }
    if (!mayAct(token, view.engagement_id ?? '')) throw new TaskNotFoundError(`no task ${id}`)
    return view
  }

  private async task(view: TaskView, includeArtifacts = true): Promise<Task> {
    return a2aTask(view, await escrowOfTask(this.deps.engagements, view.id), includeArtifacts)
  }

  /** Creates the task through the tasks area: blocking waits as the console's sync path does. */
  private async create(params: SendMessageRequest, context: ServerCallContext, forceAsync: boolean) {
    const token = tokenOf(context, SCOPES.write)
    const message = params.message
    if (!message) throw new RequestMalformedError('params.message is required')
    if (message.taskId) {
      // A2A 1.0 §3.4.2: a taskId must name an existing task (TaskNotFound); §3.1.1: an ended one takes
      // no more messages (UnsupportedOperation), and here a running one takes none either
      const view = await this.view(token, message.taskId)
      throw new UnsupportedOperationError(
        isTerminal(view.state)
          ? `the task ${view.id} is ${view.state}: it takes no further messages`
          : `the task ${view.id} takes no further messages: each message is a new task (leave taskId empty)`,
      )
    }
    const named = message.metadata?.engagement_id ?? params.metadata?.engagement_id
    const engagementId = typeof named === 'string' && named ? named : message.contextId
    if (!engagementId)
      throw new InvalidParams(
        'name the engagement in message.metadata.engagement_id (or as message.contextId)',
        'message.metadata.engagement_id',
        'ENGAGEMENT_REQUIRED',
      )
    if (!ID_PATTERN.test(engagementId) || (message.contextId && message.contextId !== engagementId))
      throw new InvalidParams(
        'the engagement id is malformed or differs from message.contextId',
        'message.metadata.engagement_id',
        'INVALID_ENGAGEMENT',
      )
    if (!mayAct(token, engagementId))
      throw new PermissionDenied('the token may not act on this engagement', {
        engagementId,
      })
    const text = textsOf(message).join('\n')
    const created = await createTask(
      this.deps,
      token.owner,
      {
        engagement_id: engagementId,
        text,
        file_ids: fileIdsOf(message.metadata?.file_ids ?? params.metadata?.file_ids),
        async: forceAsync || params.configuration?.returnImmediately === true,
      },
      tokenActor(token.id),
    )
    return { owner: token.owner, view: created.task }
  }

  async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return guarded(context, async () => this.task((await this.create(params, context, false)).view))
  }

  async *sendMessageStream(
    params: SendMessageRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const created = await this.create(params, context, true)
    yield* this.follow(created.owner, created.view)
  }

  async *resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const token = tokenOf(context, SCOPES.read)
    const view = await this.view(token, params.id)
    if (isTerminal(view.state))
      throw new UnsupportedOperationError(`the task ${view.id} is already ${view.state}`)
    yield* this.follow(token.owner, view)
  }

  /** The task, then its status changes (and the output before completion) until it ends. */
  private async *follow(owner: string, first: TaskView): AsyncGenerator<StreamResponse, void, undefined> {
    yield { payload: { $case: 'task', value: await this.task(first) } }
    let last = first.state
    const deadline = Date.now() + STREAM_LIMIT_MS
    while (!isTerminal(last) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
      const view = await taskDetail(this.deps, owner, first.id)
      if (view.state === last) continue
      last = view.state
      const artifact = view.state === 'completed' ? outputArtifact(view) : undefined
      if (artifact)
        yield {
          payload: {
            $case: 'artifactUpdate',
            value: {
              taskId: view.id,
              contextId: contextOf(view),
              artifact,
              append: false,
              lastChunk: true,
              metadata: undefined,
            },
          },
        }
      const escrow = isTerminal(view.state) ? await escrowOfTask(this.deps.engagements, view.id) : null
      yield {
        payload: {
          $case: 'statusUpdate',
          value: {
            taskId: view.id,
            contextId: contextOf(view),
            status: statusOf(view),
            metadata: isTerminal(view.state) ? a2aTask(view, escrow, false).metadata : undefined,
          },
        },
      }
    }
  }

  getTask(params: GetTaskRequest, context: ServerCallContext): Promise<Task> {
    return guarded(context, async () => {
      const token = tokenOf(context, SCOPES.read)
      return this.task(await this.view(token, params.id))
    })
  }

  listTasks(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    return guarded(context, () => this.list(params, context))
  }

  private async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const token = tokenOf(context, SCOPES.read)
    const pageSize = params.pageSize ?? 50
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 100)
      throw new InvalidParams('pageSize must be between 1 and 100', 'pageSize', 'INVALID_PAGE_SIZE')
    let after: Date | undefined
    if (params.statusTimestampAfter) {
      after = new Date(params.statusTimestampAfter)
      if (Number.isNaN(after.getTime()))
        throw new InvalidParams(
          'statusTimestampAfter must be a date-time',
          'statusTimestampAfter',
          'INVALID_TIMESTAMP',
        )
    }
    let offset = 0
    if (params.pageToken) {
      const decoded = Buffer.from(params.pageToken, 'base64url').toString('utf8')
      if (!/^o:\d{1,7}$/.test(decoded))
        throw new InvalidParams(
          'the page token is not one this server gave',
          'pageToken',
          'INVALID_PAGE_TOKEN',
        )
      offset = Number(decoded.slice(2))
    }
    if (params.contextId && !ID_PATTERN.test(params.contextId))
      throw new InvalidParams('contextId is malformed', 'contextId', 'INVALID_CONTEXT_ID')
    const page = await taskIdPage(
      this.deps,
      token.owner,
      {
        engagementIds: token.engagementIds,
        contextId: params.contextId || undefined,
        state: params.status ? (rentalStateOf(params.status) ?? null) : undefined,
        statusAfter: after,
      },
      pageSize,
      offset,
    )
    const tasks: Task[] = []
    for (const id of page.ids)
      tasks.push(
        await this.task(await taskDetail(this.deps, token.owner, id), params.includeArtifacts === true),
      )
    const next = offset + page.ids.length
    return {
      tasks,
      nextPageToken: next < page.total ? Buffer.from(`o:${next}`).toString('base64url') : '',
      pageSize,
      totalSize: page.total,
    }
  }

  /** A task that has not ended is canceled; an ended one is TaskNotCancelable. */
  cancelTask(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    return guarded(context, () => this.cancel(params, context))
  }

  private async cancel(params: CancelTaskRequest, context: ServerCallContext): Promise<Task> {
    const token = tokenOf(context, SCOPES.write)
    const view = await this.view(token, params.id)
    const canceled = await cancelTask(this.deps, token.owner, view.id, tokenActor(token.id))
    if (!canceled) throw new TaskNotCancelableError(`the task ${view.id} is already ${view.state}`)
    return this.task(await this.view(token, view.id))
  }

  async createTaskPushNotificationConfig(
    _params: TaskPushNotificationConfig,
    _context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError()
  }
  async getTaskPushNotificationConfig(
    _params: GetTaskPushNotificationConfigRequest,
    _context: ServerCallContext,
  ): Promise<TaskPushNotificationConfig> {
    throw new PushNotificationNotSupportedError()
  }
  async listTaskPushNotificationConfigs(
    _params: ListTaskPushNotificationConfigsRequest,
    _context: ServerCallContext,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    throw new PushNotificationNotSupportedError()
  }
  async deleteTaskPushNotificationConfig(
    _params: DeleteTaskPushNotificationConfigRequest,
    _context: ServerCallContext,
  ): Promise<void> {
    throw new PushNotificationNotSupportedError()
  }
}
