/**
 * The team lead: a built-in agent that really delegates. Run as a team task by the rental, its
 * message metadata carries `svc_team_delegate_url` and `svc_team_token` (a credential bound to the
 * task, docs/architecture.md "Rental: teams and delegation"); it asks the summariser and the
 * extractor through that endpoint, checks their signed results and merges them. A text holding
 * `[ask-lead]` also asks the lead itself (a loop the rental refuses: a way to see a refusal).
 */
import { verifyAgentResult } from '@svc/trust/agent-result'
import type { AgentDefinition, AgentEnv, SkillOutput } from './catalogue.ts'

const LOOP_MARKER = '[ask-lead]'

/** What the rental answers a hop: its outcome, and for a completed one the member's signed result. */
interface HopAnswer {
  hop_id?: string
  state?: string
  agent_did?: string
  output?: { text: string | null; data: unknown }
  agent_result?: unknown
  agent_signature?: string
  receipt?: { id: string; leaf_hash: string }
  error?: { code: string; message: string }
}

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

async function ask(
  url: string,
  token: string,
  agentDid: string,
  text: string,
  asked: string,
): Promise<Asked> {
  let status = 0
  let answer: HopAnswer = {}
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_did: agentDid, text }),
      signal: AbortSignal.timeout(20_000),
    })
    status = res.status
    answer = (await res.json()) as HopAnswer
  } catch (err) {
    answer = { error: { code: 'unreachable', message: (err as Error).message } }
  }
  const completed = status === 200 && answer.state === 'completed'
  // the member's result is checked here too: the lead merges only what its member signed
  const verified = completed && verifyAgentResult(answer.agent_result, answer.agent_signature)
  return {
    asked,
    agent_did: agentDid,
    state: answer.state ?? 'refused',
    hop_id: answer.hop_id ?? null,
    verified,
    reason: answer.error ? `${answer.error.code}: ${answer.error.message}` : null,
    data: completed ? (answer.output?.data ?? null) : null,
    agent_result: answer.agent_result ?? null,
    agent_signature: answer.agent_signature ?? null,
    receipt_leaf_hash: answer.receipt?.leaf_hash ?? null,
  }
}

async function lead(text: string, options: Record<string, unknown>, env: AgentEnv): Promise<SkillOutput> {
  const url = options.svc_team_delegate_url
  const token = options.svc_team_token
  if (typeof url !== 'string' || typeof token !== 'string')
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
  // one after another: the rental counts each hop against the task's budget in order
  for (const [id, did] of wanted) if (did) delegated.push(await ask(url, token, did, text, id))
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
