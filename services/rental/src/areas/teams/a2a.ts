/**
 * The lead-to-rental leg of a team task as A2A 1.0: the agent holding a hop's credential sends
 * `SendMessage` to the delegation endpoint, naming the member in `message.metadata`; the rental
 * authorises the hop against the team terms, runs it over A2A and answers the hop as a Task.
 */
import { type AgentCard, type Message, Role, type Task, TaskState } from '@a2a-js/sdk'
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors'
import type { A2ARequestHandler, ServerCallContext, User } from '@a2a-js/sdk/server'
import { isEd25519DidKey } from '@svc/kit'
import { rethrow } from '@svc/kit/http/a2a-jsonrpc'
import { dataPart, textPart } from '@svc/kit/http/a2a-parts'
import { InvalidParams, PermissionDenied } from '../a2a/index.ts'
import { childHop, delegate, type HopOutcome, TEAM_A2A_PATH } from './hops.ts'
import type { TeamDeps } from './service.ts'
import type { HopRow } from './store.ts'

export const HOP_BEARER_SCHEME = 'teamHopBearer'
export const HOP_INPUT_MODES = ['text/plain']
/** The message metadata key naming the member to delegate to. */
export const MEMBER_KEY = 'svc_team_agent_did'
const MAX_TEXT = 100_000
const ID_PATTERN = /^[A-Za-z0-9_-]{1,100}$/

/** The delegation endpoint as an A2A 1.0 agent (JSON form). */
export function teamHopCard(baseUrl: string, version: string) {
  const base = baseUrl.replace(/\/+$/, '')
  const modes = { inputModes: HOP_INPUT_MODES, outputModes: ['text/plain', 'application/json'] }
  return {
    name: 'svc team delegation',
    description: `A team task’s agent delegates a sub-task to a member of its team through the rental. Send SendMessage with the text for the member and the member’s did:key in message.metadata.${MEMBER_KEY}, authenticated by the hop credential your own message carried (svc_team_token). Each hop is authorised against the team terms the client signed (membership, delegation rules, depth, budget, no loops), run over A2A, checked (the member’s signed result) and receipted (team.hop). The answer is the hop as a Task: completed (the member’s artifact and signed result), failed, or rejected (the rule it broke).`,
    supportedInterfaces: [
      { url: `${base}${TEAM_A2A_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    provider: { organization: 'svc agent rental', url: base },
    version,
    documentationUrl: `${base}/docs`,
    capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {
      [HOP_BEARER_SCHEME]: {
        httpAuthSecurityScheme: {
          description:
            'The hop credential of the team task’s message to you (svc_team_token): valid while your hop runs',
          scheme: 'Bearer',
          bearerFormat: 'hop_',
        },
      },
    },
    securityRequirements: [{ schemes: { [HOP_BEARER_SCHEME]: { list: [] } } }],
    defaultInputModes: modes.inputModes,
    defaultOutputModes: modes.outputModes,
    skills: [
      {
        id: 'delegate',
        name: 'Delegate to a team member',
        description: `Runs the message’s text as a task of the member named in message.metadata.${MEMBER_KEY}, within the team terms`,
        tags: ['team', 'delegation'],
        examples: [],
        ...modes,
      },
    ],
  }
}

/** The caller the route authenticated: the running hop its credential opens. */
export class HopUser implements User {
  constructor(readonly hop: HopRow) {}
  get isAuthenticated() {
    return true
  }
  get userName() {
    return this.hop.agent_did
  }
}

const STATES: Record<HopRow['state'], TaskState> = {
  running: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  refused: TaskState.TASK_STATE_REJECTED,
}

/** A hop as the endpoint answers it: a delegation's outcome, or a stored hop (GetTask; a running one has no receipt yet). */
type HopAnswer = Omit<HopOutcome, 'state' | 'receipt'> & {
  task_id: string
  state: HopRow['state']
  receipt: HopOutcome['receipt'] | null
}

const statusMessage = (hop: HopAnswer, text: string): Message => ({
  messageId: `${hop.hop_id}-status`,
  contextId: '',
  taskId: hop.hop_id,
  role: Role.ROLE_AGENT,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
})

/**
 * A hop as an A2A Task: id = the hop id, contextId = the team task id; a completed hop's artifact
 * is the member's output with its signed result (`svc_result`, `svc_signature`, as the agents'
 * contract puts them); the metadata names the hop, its parent, agent, refusal rule and receipt.
 */
export function hopTask(hop: HopAnswer): Task {
  const note = hop.state === 'refused' ? `${hop.refusal}: ${hop.error}` : hop.error
  return {
    id: hop.hop_id,
    contextId: hop.task_id,
    status: {
      state: STATES[hop.state],
      timestamp: undefined,
      message: note ? { ...statusMessage(hop, note), contextId: hop.task_id } : undefined,
    },
    artifacts: hop.output
      ? [
          {
            artifactId: `${hop.hop_id}-output`,
            name: 'output',
            description: 'the member’s output',
            parts: [
              ...(hop.output.text !== null ? [textPart(hop.output.text)] : []),
              dataPart(hop.output.data),
            ],
            metadata: { svc_result: hop.agent_result, svc_signature: hop.agent_signature },
            extensions: [],
          },
        ]
      : [],
    history: [],
    metadata: {
      svc_hop_id: hop.hop_id,
      svc_parent_hop_id: hop.parent_hop_id,
      svc_agent_did: hop.agent_did,
      svc_refusal: hop.refusal,
      svc_receipt: hop.receipt,
    },
  }
}

/** A JSON column as read (PGlite and PostgreSQL give objects; a driver may give the text). */
const parsed = (value: unknown) => {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch {
    return value
  }
}

/** A stored hop (GetTask) in the form of a delegation's outcome. */
function answerOfRow(row: HopRow): HopAnswer {
  return {
    hop_id: row.id,
    parent_hop_id: row.parent_id ?? '',
    task_id: row.task_id,
    state: row.state,
    agent_did: row.agent_did,
    output: (parsed(row.output) as HopOutcome['output']) ?? null,
    agent_result: parsed(row.agent_result) ?? null,
    agent_signature: row.agent_signature,
    refusal: row.refusal as HopOutcome['refusal'],
    error: row.error,
    receipt: row.receipt_id ? { id: row.receipt_id, leaf_hash: row.receipt_leaf_hash! } : null,
  }
}

function hopOf(context: ServerCallContext): HopRow {
  if (!(context.user instanceof HopUser)) throw new PermissionDenied('no hop credential', {})
  return context.user.hop
}

const textsOf = (message: Message) =>
  message.parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))

/** The SDK's request handler over the teams area: SendMessage delegates, GetTask reads a hop the caller delegated. */
export class TeamHopA2AHandler implements A2ARequestHandler {
  constructor(
    private readonly deps: TeamDeps,
    private readonly card: () => Promise<AgentCard>,
  ) {}

  getAgentCard(): Promise<AgentCard> {
    return this.card()
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new UnsupportedOperationError('this agent has no authenticated extended card')
  }

  async sendMessage(
    params: Parameters<A2ARequestHandler['sendMessage']>[0],
    context: ServerCallContext,
  ): Promise<Message | Task> {
    try {
      const parent = hopOf(context)
      const message = params.message
      if (!message) throw new RequestMalformedError('params.message is required')
      if (message.taskId) throw new UnsupportedOperationError('each message is a new hop: leave taskId empty')
      const member = message.metadata?.[MEMBER_KEY] ?? params.metadata?.[MEMBER_KEY]
      if (typeof member !== 'string' || !isEd25519DidKey(member))
        throw new InvalidParams(
          `name the member in message.metadata.${MEMBER_KEY} (its Ed25519 did:key)`,
          `message.metadata.${MEMBER_KEY}`,
          'MEMBER_REQUIRED',
        )
      const text = textsOf(message).join('\n')
      if (text.length > MAX_TEXT)
        throw new InvalidParams(`the text is over ${MAX_TEXT} characters`, 'message.parts', 'TEXT_TOO_LONG')
      const outcome = await delegate(this.deps, parent, { agent_did: member, text })
      return hopTask({ ...outcome, task_id: parent.task_id })
    } catch (err) {
      return rethrow(context, err)
    }
  }

  // eslint-disable-next-line require-yield
  async *sendMessageStream(): AsyncGenerator<never, void, undefined> {
    throw new UnsupportedOperationError('no streaming: SendMessage answers when the hop ends')
  }

  async getTask(params: { id: string }, context: ServerCallContext): Promise<Task> {
    try {
      const parent = hopOf(context)
      const hop = ID_PATTERN.test(params.id) ? await childHop(this.deps, parent, params.id) : undefined
      if (!hop) throw new TaskNotFoundError(`no hop ${params.id} delegated by this hop`)
      return hopTask(answerOfRow(hop))
    } catch (err) {
      return rethrow(context, err)
    }
  }

  async listTasks(): Promise<never> {
    throw new UnsupportedOperationError(
      'ListTasks: read the chain (GET /api/teams/{id}/tasks/{task_id}/chain)',
    )
  }
  async cancelTask(): Promise<never> {
    throw new UnsupportedOperationError('a hop ends with its member’s answer; cancel the team task instead')
  }
  // eslint-disable-next-line require-yield
  async *resubscribe(): AsyncGenerator<never, void, undefined> {
    throw new UnsupportedOperationError('no streaming')
  }
  async createTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError()
  }
  async getTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError()
  }
  async listTaskPushNotificationConfigs(): Promise<never> {
    throw new PushNotificationNotSupportedError()
  }
  async deleteTaskPushNotificationConfig(): Promise<never> {
    throw new PushNotificationNotSupportedError()
  }
}
