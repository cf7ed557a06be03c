import { randomUUID } from 'node:crypto'
import {
  Artifact,
  type Message,
  type Part,
  Role,
  type SendMessageRequest,
  type Task,
  TaskState,
  taskStateToJSON,
} from '@a2a-js/sdk'
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client'
import { TaskNotCancelableError } from '@a2a-js/sdk/errors'
import { type AgentCredentials, authenticatingFetch } from './agent-credentials.ts'

/** One A2A call's outcome: the task's first artifact in its wire (ProtoJSON) form, and its final status. */
export interface AgentAnswer {
  agentTaskId: string
  /** The agent's final status: its A2A state name and the text of its status message, if any. */
  status: { state: string; message: string | null }
  artifact: { parts?: Array<{ text?: string; data?: unknown }>; metadata?: Record<string, unknown> }
}

/**
 * The agent stopped to ask (A2A `input-required` or `auth-required`): its question, and its task
 * (id and context) to send the answer on.
 */
export interface AgentAsks {
  agentTaskId: string
  contextId: string
  state: 'input-required' | 'auth-required'
  question: string
}

/** The answer to an agent's question, sent as the next message of its task. */
export interface AgentReply {
  agentTaskId: string
  contextId: string
}

const ASKING = new Map<TaskState, AgentAsks['state']>([
  [TaskState.TASK_STATE_INPUT_REQUIRED, 'input-required'],
  [TaskState.TASK_STATE_AUTH_REQUIRED, 'auth-required'],
])

function asks(task: Task): AgentAsks | undefined {
  const state = task.status && ASKING.get(task.status.state)
  if (!state) return undefined
  const parts = task.status?.message?.parts ?? []
  const question = parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])).join('\n')
  return { agentTaskId: task.id, contextId: task.contextId, state, question: question.slice(0, 2000) }
}

const request = (
  text: string,
  reply?: AgentReply,
  metadata?: Record<string, string>,
  files: Part[] = [],
  messageId: string = randomUUID(),
): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId,
    contextId: reply?.contextId ?? '',
    taskId: reply?.agentTaskId ?? '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
      ...files,
    ],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
})

/** Where the dispatcher's requests go and how. */
export interface DispatchRoutes {
  /** Whether a card URL is the platform's own (the built-in agents at AGENTS_URL, the rental itself). */
  trusted(cardUrl: string): boolean
  /** The fetch for any other agent's card and endpoints: the kit's guarded fetch. */
  guarded: typeof fetch
  /** The agents' access tokens, when they take them (see agent-credentials.ts). */
  credentials?: ((url: string) => Promise<AgentCredentials | undefined>) | undefined
}

/** A client factory whose every request (the card, each transport's calls) goes through `base`. */
function factoryOver(base: typeof fetch): ClientFactory {
  return new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl: base }),
      new RestTransportFactory({ fetchImpl: base }),
    ],
    // the interface the market checked at listing: the card's JSON-RPC one
    preferredTransports: ['JSONRPC'],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: base }),
  })
}

/**
 * Sends tasks to agents over A2A 1.0 with the @a2a-js/sdk client, resolved from the agent's card
 * URL (the card names the JSON-RPC endpoint). Clients are kept per card URL. The platform's own
 * agents are called directly; an external agent's card is fetched again here and its endpoint is
 * whatever that card says now, so its every request, redirect included, goes through the guarded
 * fetch (the market's address rules). With credentials, calls carry the rental's access token.
 */
export class AgentDispatcher {
  readonly #clients = new Map<string, Promise<Client>>()
  readonly #trusted: ClientFactory
  readonly #guarded: ClientFactory

  constructor(private readonly routes: DispatchRoutes) {
    const authenticated = (base: typeof fetch) =>
      routes.credentials ? authenticatingFetch(routes.credentials, base) : base
    this.#trusted = factoryOver(authenticated((input, init) => fetch(input, init)))
    this.#guarded = factoryOver(authenticated(routes.guarded))
  }

  #client(cardUrl: string): Promise<Client> {
    let client = this.#clients.get(cardUrl)
    if (!client) {
      const factory = this.routes.trusted(cardUrl) ? this.#trusted : this.#guarded
      client = factory.createFromUrl(cardUrl, '')
      client.catch(() => this.#clients.delete(cardUrl))
      this.#clients.set(cardUrl, client)
    }
    return client
  }

  /**
   * Sends `text` as a new task, or, with `reply`, as the next message of the agent's task;
   * `metadata` is the message's (the agent version: `svc_agent_version`); `files`, file parts
   * (A2A 1.0 `url` parts) after the text. With `onTask`, the message is streamed
   * (SendStreamingMessage; the SDK falls back to SendMessage when the card has no streaming) and
   * `onTask` learns the agent's task once the agent has named it and works on, so that the task can
   * be canceled at the agent while it runs (not when the answer came with the name: `streamed`);
   * without (or with `reply`), one blocking SendMessage.
   * `messageId`: the message's A2A id (the same for each attempt of a task's run); else a new one.
   */
  async send(
    cardUrl: string,
    text: string,
    signal: AbortSignal,
    reply?: AgentReply,
    metadata?: Record<string, string>,
    files: Part[] = [],
    onTask?: (agentTask: AgentReply) => Promise<void>,
    messageId?: string,
  ): Promise<AgentAnswer | AgentAsks> {
    const client = await this.#client(cardUrl)
    const message = request(text, reply, metadata, files, messageId)
    // an answer on the agent's task: its id is known already, and its stream may begin with a status update
    const result =
      onTask && !reply
        ? await streamed(client, message, signal, onTask)
        : await client.sendMessage(message, { signal })
    if (!('artifacts' in result)) throw new Error('the agent answered a message, not a task')
    const asked = asks(result)
    if (asked) return asked
    const artifact = result.artifacts[0]
    const said = (result.status?.message?.parts ?? []).flatMap((p) =>
      p.content?.$case === 'text' ? [p.content.value] : [],
    )
    if (!artifact)
      throw new Error(
        `the agent's task ${result.id} has no artifact${said.length ? `: ${said.join(' ').slice(0, 500)}` : ''}`,
      )
    return {
      agentTaskId: result.id,
      status: {
        state: result.status ? taskStateToJSON(result.status.state) : 'TASK_STATE_UNSPECIFIED',
        message: said.length ? said.join('\n').slice(0, 2000) : null,
      },
      artifact: Artifact.toJSON(artifact) as AgentAnswer['artifact'],
    }
  }

  /**
   * A2A CancelTask of the agent's task: `canceled` when the agent canceled it, `ended` when it
   * answers that the task cannot be canceled (it had ended); any other error throws.
   */
  async cancel(cardUrl: string, agentTaskId: string, signal: AbortSignal): Promise<'canceled' | 'ended'> {
    const client = await this.#client(cardUrl)
    try {
      const task = await client.cancelTask({ tenant: '', id: agentTaskId, metadata: undefined }, { signal })
      return task.status?.state === TaskState.TASK_STATE_CANCELED ? 'canceled' : 'ended'
    } catch (err) {
      if (err instanceof TaskNotCancelableError) return 'ended'
      throw err
    }
  }
}

/**
 * The streamed answer folded into the task it describes (its last status, its artifacts). The
 * agent's task is told to `onTask` once the stream has to wait for the agent after naming it: not
 * when the events in hand already end it (an agent that answered at once; a card without streaming,
 * whose one blocking answer the SDK yields as the stream's only event), since the answer names the
 * task and its completion keeps the id. What `onTask` does is finished before the answer is.
 */
async function streamed(
  client: Client,
  message: SendMessageRequest,
  signal: AbortSignal,
  onTask: (agentTask: AgentReply) => Promise<void>,
): Promise<Task | Message> {
  let task: Task | undefined
  let pending: NodeJS.Immediate | undefined
  let told: Promise<void> | undefined
  const tell = (agentTask: AgentReply) => {
    pending = undefined
    told = onTask(agentTask)
    // awaited below; a stream that fails first leaves it to finish on its own
    told.catch(() => {})
  }
  try {
    for await (const event of client.sendMessageStream(message, { signal })) {
      const payload = event.payload
      if (!payload) continue
      if (payload.$case === 'message') {
        await told
        return payload.value
      }
      if (payload.$case === 'task') task = payload.value
      else if (!task) {
        const { taskId: id, contextId } = payload.value
        task = { id, contextId, status: undefined, artifacts: [], history: [], metadata: undefined }
      }
      // told once this turn's events are read: when the stream then waits for the agent
      if (!told && !pending) pending = setImmediate(tell, { agentTaskId: task.id, contextId: task.contextId })
      if (payload.$case === 'statusUpdate') task.status = payload.value.status
      if (payload.$case === 'artifactUpdate' && payload.value.artifact) {
        const artifact = payload.value.artifact
        const at = task.artifacts.findIndex((a) => a.artifactId === artifact.artifactId)
        if (at < 0) task.artifacts.push(artifact)
        else if (payload.value.append)
          task.artifacts[at] = {
            ...task.artifacts[at]!,
            parts: [...task.artifacts[at]!.parts, ...artifact.parts],
          }
        else task.artifacts[at] = artifact
      }
    }
  } finally {
    if (pending) clearImmediate(pending)
  }
  await told
  if (!task) throw new Error('the agent ended its stream without a task')
  return task
}
