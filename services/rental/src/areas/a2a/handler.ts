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
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server'
import { AppError } from '@svc/kit'
import { tokenActor } from '../events/index.ts'
import type { VerifiedApiToken } from '../tokens/service.ts'
import {
  cancelTask,
  createTask,
  type TaskDeps,
  taskDetail,
  taskIdPage,
  type TaskView,
} from '../tasks/index.ts'
import { guarded, ID_PATTERN, mayAct, PermissionDenied, SCOPES, tokenOf } from './caller.ts'
import { engagementIdOf, listQueryOf, nextPageToken, taskInputOf } from './params.ts'
import { followTask } from './stream.ts'
import { a2aTask, escrowOfTask, isTerminal } from './tasks.ts'

/** The method dispatch: each A2A method over the tasks area, as the caller's token allows. */
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
    const engagementId = engagementIdOf(params, message)
    if (!mayAct(token, engagementId))
      throw new PermissionDenied('the token may not act on this engagement', {
        engagementId,
      })
    const created = await createTask(
      this.deps,
      token.owner,
      taskInputOf(params, message, engagementId, forceAsync),
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

  private follow(owner: string, first: TaskView) {
    return followTask(this.deps, owner, first, (view) => this.task(view))
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
    const { pageSize, offset, filter } = listQueryOf(params, token.engagementIds)
    const page = await taskIdPage(this.deps, token.owner, filter, pageSize, offset)
    const tasks: Task[] = []
    for (const id of page.ids)
      tasks.push(
        await this.task(await taskDetail(this.deps, token.owner, id), params.includeArtifacts === true),
      )
    const next = offset + page.ids.length
    return {
      tasks,
      nextPageToken: nextPageToken(next, page.total),
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
