/**
 * The team lead: a built-in agent that really delegates. Run as a team task by the rental, its
 * message metadata carries `svc_team_card_url` (the A2A card of the rental's delegation endpoint)
 * and `svc_team_token` (a credential bound to the task, docs/rental/teams.md); it asks the summariser and the extractor over A2A through that endpoint (the
 * @a2a-js/sdk client, the member named in the message metadata), checks their signed results and
 * merges them. A text holding `[ask-lead]` also asks the lead itself (a loop the rental refuses: a
 * way to see a refusal).
 */
import { randomUUID } from 'node:crypto'
import { Role, type Task, TaskState } from '@a2a-js/sdk'
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { verifyAgentResult } from '@svc/trust/agent-result'
import type { AgentDefinition, AgentEnv, SkillOutput } from './catalogue.ts'

const LOOP_MARKER = '[ask-lead]'
const HOP_TIMEOUT_MS = 20_000

interface Asked {
  asked: string
  agent_did: string
  state: string
  hop_id: string | null
  verified: boolean
  reason: string | null
  data: unknown
  agent_result: unknown
  agent_signature: string | null
  receipt_leaf_hash: string | null
}

const STATES = new Map<TaskState, string>([
  [TaskState.TASK_STATE_COMPLETED, 'completed'],
  [TaskState.TASK_STATE_FAILED, 'failed'],
  [TaskState.TASK_STATE_REJECTED, 'refused'],
])

/** An A2A client of the delegation endpoint, its calls carrying the hop credential. */
function delegationClient(cardUrl: string, token: string): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('authorization', `Bearer ${token}`)
    return fetch(input, { ...init, headers })
  }
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  )
  return factory.createFromUrl(cardUrl, '')
}

/** One hop: SendMessage with the member named in the metadata; the answer is the hop as a Task. */
async function ask(client: Client, agentDid: string, text: string, asked: string): Promise<Asked> {
  let task: Task | undefined
  let reason: string | null = null
  try {
    const answer = await client.sendMessage(
      {
        tenant: '',
        message: {
          messageId: randomUUID(),
          contextId: '',
          taskId: '',
          role: Role.ROLE_USER,
          parts: [
            {
              content: { $case: 'text', value: text },
              metadata: undefined,
              filename: '',
              mediaType: 'text/plain',
            },
          ],
          metadata: { svc_team_agent_did: agentDid },
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      },
      { signal: AbortSignal.timeout(HOP_TIMEOUT_MS) },
    )
    if ('artifacts' in answer) task = answer
    else reason = 'the delegation endpoint answered a message, not a hop'
  } catch (err) {
    reason = (err as Error).message.slice(0, 500)
  }
  const state = (task?.status && STATES.get(task.status.state)) ?? 'refused'
  const said = (task?.status?.message?.parts ?? []).flatMap((p) =>
    p.content?.$case === 'text' ? [p.content.value] : [],
  )
  const artifact = task?.artifacts[0]
  const data = artifact?.parts.find((p) => p.content?.$case === 'data')?.content
  const metadata = (artifact?.metadata ?? {}) as { svc_result?: unknown; svc_signature?: string }
  const completed = state === 'completed'
  const receipt = task?.metadata?.svc_receipt as { leaf_hash?: string } | undefined
  return {
    asked,
    agent_did: agentDid,
    state,
    hop_id: task?.id ?? null,
    // the member's result is checked here too: the lead merges only what its member signed
    verified: completed && verifyAgentResult(metadata.svc_result, metadata.svc_signature),
    reason: reason ?? (said.length ? said.join(' ') : null),
    data: completed && data?.$case === 'data' ? data.value : null,
    agent_result: metadata.svc_result ?? null,
    agent_signature: metadata.svc_signature ?? null,
    receipt_leaf_hash: receipt?.leaf_hash ?? null,
  }
}

async function lead(text: string, options: Record<string, unknown>, env: AgentEnv): Promise<SkillOutput> {
  const cardUrl = options.svc_team_card_url
  const token = options.svc_team_token
  if (typeof cardUrl !== 'string' || typeof token !== 'string')
    return {
      text: 'Not run as a team task: no delegation credential, nothing delegated.',
      data: { delegated: [], summary: null, facts: null },
    }
  const wanted: Array<[string, string | undefined]> = [
    ['summariser', env.didOf('summariser')],
    ['extractor', env.didOf('extractor')],
    ...(text.includes(LOOP_MARKER)
      ? [['team-lead', env.didOf('team-lead')] as [string, string | undefined]]
      : []),
  ]
  const delegated: Asked[] = []
  let client: Client
  try {
    client = await delegationClient(cardUrl, token)
  } catch (err) {
    return {
      text: `The delegation endpoint could not be reached: ${(err as Error).message.slice(0, 300)}`,
      data: { delegated: [], summary: null, facts: null },
    }
  }
  // one after another: the rental counts each hop against the task's budget in order
  for (const [id, did] of wanted) if (did) delegated.push(await ask(client, did, text, id))
  const from = (id: string) =>
    delegated.find((d) => d.asked === id && d.verified)?.data as Record<string, unknown> | undefined
  const summary = from('summariser')
  const facts = from('extractor')
  const lines = [
    `Summary: ${typeof summary?.summary === 'string' ? summary.summary : '(not available)'}`,
    `Facts: ${facts ? JSON.stringify({ emails: facts.emails, dates: facts.dates, amounts: facts.amounts }) : '(not available)'}`,
    ...delegated.map((d) => `- ${d.asked}: ${d.state}${d.reason ? ` (${d.reason})` : ''}`),
  ]
  return {
    text: lines.join('\n'),
    data: { summary: summary ?? null, facts: facts ?? null, delegated },
  }
}

export const TEAM_LEAD: AgentDefinition = {
  id: 'team-lead',
  name: 'Team lead',
  description:
    'Leads a team: asks the summariser and the extractor through the rental (each hop authorised and receipted) and merges their signed results into a brief.',
  skill: {
    id: 'lead-brief',
    name: 'Delegated brief',
    description:
      'A summary and the key facts of a text, made by delegating to the summariser and the extractor of its team (run as a team task).',
    tags: ['team', 'delegation', 'summary', 'extraction'],
    examples: ['A document to brief: its summary and the facts it rests on.'],
  },
  run: (text, options, _files, env) => lead(text, options, env),
}
