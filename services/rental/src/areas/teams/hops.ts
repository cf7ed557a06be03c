import { createHash, randomBytes } from 'node:crypto'
import { agentInputHash, checkAgentArtifact } from '@svc/trust/agent-result'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { SlaTeam } from '../engagements/bodies.ts'
import type { EngagementRow, SlaBody } from '../engagements/index.ts'
import type { Actor } from '../events/index.ts'
import type { MessageMetadata } from '../tasks/index.ts'
import { teamEvent, type TeamDeps } from './service.ts'
import * as store from './store.ts'
import type { HopRow, TeamRow } from './store.ts'

/**
 * Where a team task's agents delegate (docs/rental/teams.md): an
 * A2A 1.0 JSON-RPC endpoint, named by its agent card, that the hop's credential opens.
 */
export const TEAM_A2A_PATH = '/api/team-hops/a2a'
export const TEAM_CARD_PATH = '/api/team-hops/agent-card.json'
const TOKEN_PREFIX = 'hop_'

const hashToken = (token: string) => createHash('sha256').update(token).digest()
const newToken = () => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
const newHopId = () => `hop_${randomBytes(12).toString('base64url')}`

/** How long a hop's credential lasts: the agent call's bound, and a margin. */
const tokenLifetimeMs = (deps: TeamDeps) => Math.max(deps.ctx.config.taskTimeoutMs, 5_000) * 2 + 10_000

/** What a hop's agent is given to delegate further: the delegation agent's card and its credential, as message metadata. */
const delegationMetadata = (deps: TeamDeps, token: string, teamId: string) => ({
  svc_team_id: teamId,
  svc_team_card_url: `${deps.ctx.baseUrl}${TEAM_CARD_PATH}`,
  svc_team_token: token,
})

type TaskRow = Parameters<MessageMetadata>[0]

/**
 * The tasks area asks this before each A2A call of a task: a task of a team's engagement is a
 * team task; its root hop (the lead's run) is made once, and each attempt gets a new credential.
 * The team is the one the engagement's signed SLA binds (its hire wrote both in one transaction):
 * no read of the teams.
 */
export async function metadataForTask(deps: TeamDeps, task: TaskRow, engagement: EngagementRow | undefined) {
  if (!task.engagement_id || engagement?.id !== task.engagement_id) return undefined
  const terms = (engagement.sla as SlaBody).team
  if (!terms) return undefined
  const team = { id: terms.team_id, lead_did: terms.lead_did }
  const token = newToken()
  const expires = new Date(deps.ctx.now().getTime() + tokenLifetimeMs(deps))
  await store.upsertRootHop(deps.ctx.db, {
    id: newHopId(),
    team_id: team.id,
    task_id: task.id,
    parent_id: null,
    depth: 0,
    agent_did: team.lead_did,
    state: 'running',
    input_sha256: task.input_sha256,
    cost_fils: 0,
    token_hash: hashToken(token),
    token_expires_at: expires,
    created_at: deps.ctx.now(),
  })
  return delegationMetadata(deps, token, team.id)
}

type Refusal = 'not_member' | 'not_allowed' | 'too_deep' | 'over_budget' | 'loop'

/** Every hop is checked against the terms the client signed: the first broken rule is named. */
function authorise(
  terms: SlaTeam,
  parent: HopRow,
  hops: HopRow[],
  agentDid: string,
): { refusal: Refusal; why: string } | { cost: number } {
  const byId = new Map(hops.map((h) => [h.id, h]))
  for (let at: HopRow | undefined = parent; at; at = at.parent_id ? byId.get(at.parent_id) : undefined)
    if (at.agent_did === agentDid)
      return { refusal: 'loop', why: `${agentDid} is an ancestor of this hop: no delegation back to it` }
  const member = terms.members.find((m) => m.agent_did === agentDid)
  if (!member) return { refusal: 'not_member', why: `${agentDid} is not a member of the team` }
  const rule = terms.delegation.find((d) => d.from === parent.agent_did)
  if (!rule?.to.includes(agentDid))
    return { refusal: 'not_allowed', why: `${parent.agent_did} may not delegate to ${agentDid}` }
  if (parent.depth + 1 > terms.max_depth)
    return { refusal: 'too_deep', why: `depth ${parent.depth + 1} is over max_depth ${terms.max_depth}` }
  const spent = hops.filter((h) => h.state !== 'refused').reduce((sum, h) => sum + Number(h.cost_fils), 0)
  if (spent + member.hop_fils > terms.task_budget_fils)
    return {
      refusal: 'over_budget',
      why: `${spent} + ${member.hop_fils} fils is over the task budget of ${terms.task_budget_fils}`,
    }
  return { cost: member.hop_fils }
}

/** The `team.hop` receipt of a hop's end (refused, completed or failed), in its transaction. */
async function hopReceipt(
  deps: TeamDeps,
  trx: RentalDb,
  team: TeamRow,
  hop: Pick<HopRow, 'id' | 'task_id' | 'parent_id' | 'depth' | 'agent_did' | 'input_sha256' | 'cost_fils'>,
  data: Record<string, unknown>,
) {
  return deps.ctx.receipts.record(trx, {
    type: 'team.hop',
    subject: hop.id,
    data: {
      hop_id: hop.id,
      team_id: team.id,
      engagement_id: team.engagement_id,
      terms_hash: team.terms_hash,
      task_id: hop.task_id,
      parent_hop_id: hop.parent_id,
      depth: hop.depth,
      agent_did: hop.agent_did,
      input_sha256: hop.input_sha256,
      cost_fils: Number(hop.cost_fils),
      ...data,
    },
  })
}

/**
 * The running hop whose credential `token` is, while its task runs; else undefined (unknown,
 * expired, ended, or its task no longer running).
 */
export async function hopOfCredential(deps: TeamDeps, token: string): Promise<HopRow | undefined> {
  if (!token.startsWith(TOKEN_PREFIX)) return undefined
  const found = await store.hopByToken(deps.ctx.db, hashToken(token))
  if (!found?.token_expires_at || found.token_expires_at <= deps.ctx.now() || found.state !== 'running')
    return undefined
  const taskState = await deps.tasks.stateOf(found.task_id)
  return taskState === 'working' || taskState === 'submitted' ? found : undefined
}

/** A hop of the task that `parent` delegated, or undefined. */
export async function childHop(deps: TeamDeps, parent: HopRow, hopId: string) {
  const hop = await store.hopById(deps.ctx.db, hopId)
  return hop?.parent_id === parent.id ? hop : undefined
}

/** What a delegation comes to: the hop, its state and receipt, and the member's signed result or the refusal. */
export interface HopOutcome {
  hop_id: string
  parent_hop_id: string
  state: 'completed' | 'failed' | 'refused'
  agent_did: string
  output: { text: string | null; data: unknown } | null
  agent_result: unknown
  agent_signature: string | null
  refusal: Refusal | null
  error: string | null
  receipt: { id: string; leaf_hash: string }
}

/**
 * A delegation asked by the agent holding the parent hop's credential: authorised against the
 * team terms (a refusal is recorded as a `refused` hop with its receipt), sent to the member over
 * A2A, its signed result checked, and the hop ended with its receipt.
 */
export async function delegate(
  deps: TeamDeps,
  found: HopRow,
  input: { agent_did: string; text: string },
): Promise<HopOutcome> {
  const now = deps.ctx.now()
  const hopId = newHopId()
  const childToken = newToken()
  const decided = await inTransaction(deps.ctx.db, async (trx) => {
    // the team row locked: a task's hops are authorised one at a time (the budget is counted once)
    const team = (await store.teamById(trx, found.team_id, true))!
    if (team.state !== 'hired')
      throw rentalError('team_ended', `the team is ${team.state}: it delegates no more`)
    const hops = await store.hopsOfTask(trx, found.task_id)
    const parent = hops.find((h) => h.id === found.id)!
    const verdict = authorise(team.terms as SlaTeam, parent, hops, input.agent_did)
    const row = {
      id: hopId,
      team_id: team.id,
      task_id: found.task_id,
      parent_id: parent.id,
      depth: parent.depth + 1,
      agent_did: input.agent_did,
      state: 'refusal' in verdict ? ('refused' as const) : ('running' as const),
      refusal: 'refusal' in verdict ? verdict.refusal : null,
      error: 'refusal' in verdict ? verdict.why : null,
      cost_fils: 'cost' in verdict ? verdict.cost : 0,
      input_sha256: agentInputHash([input.text]),
      output_sha256: null,
      agent_result: null,
      agent_signature: null,
      output: null,
      receipt_id: null,
      receipt_leaf_hash: null,
      token_hash: 'cost' in verdict ? hashToken(childToken) : null,
      token_expires_at: 'cost' in verdict ? new Date(now.getTime() + tokenLifetimeMs(deps)) : null,
      created_at: now,
      ended_at: 'refusal' in verdict ? now : null,
    }
    const actor: Actor = { type: 'agent', id: parent.agent_did }
    if ('refusal' in verdict) {
      const receipt = await hopReceipt(deps, trx, team, row, {
        state: 'refused',
        refusal: verdict.refusal,
        reason: verdict.why,
        at: now.toISOString(),
      })
      await store.insertHop(trx, { ...row, receipt_id: receipt.id, receipt_leaf_hash: receipt.leafHash })
      await teamEvent(
        deps,
        trx,
        team,
        actor,
        'team.hop',
        {
          hop_id: hopId,
          state: 'refused',
          refusal: verdict.refusal,
          agent_did: input.agent_did,
          receipt_id: receipt.id,
        },
        { task_id: found.task_id },
      )
      return { team, refused: { ...verdict, receipt } }
    }
    await store.insertHop(trx, row)
    return { team, refused: undefined }
  })
  if (decided.refused)
    return {
      hop_id: hopId,
      parent_hop_id: found.id,
      state: 'refused',
      agent_did: input.agent_did,
      output: null,
      agent_result: null,
      agent_signature: null,
      refusal: decided.refused.refusal,
      error: decided.refused.why,
      receipt: { id: decided.refused.receipt.id, leaf_hash: decided.refused.receipt.leafHash },
    }
  return runHop(deps, decided.team, found.id, hopId, input, childToken)
}

async function runHop(
  deps: TeamDeps,
  team: TeamRow,
  parentId: string,
  hopId: string,
  input: { agent_did: string; text: string },
  childToken: string,
): Promise<HopOutcome> {
  let outcome:
    | { ok: true; data: unknown; text: string | null; result: unknown; signature: string }
    | { ok: false; error: string }
  try {
    const cardUrl = await deps.catalogue.cardUrl(input.agent_did)
    if (!cardUrl) throw new Error(`${input.agent_did} is not in the catalogue`)
    const answer = await deps.tasks.deps.dispatcher.send(
      cardUrl,
      input.text,
      AbortSignal.timeout(Math.max(deps.ctx.config.taskTimeoutMs, 5_000)),
      undefined,
      delegationMetadata(deps, childToken, team.id),
    )
    if ('question' in answer) throw new Error('the member asked for input: a hop takes none')
    const check = checkAgentArtifact(answer.artifact, { agentDid: input.agent_did, inputTexts: [input.text] })
    outcome = check.ok
      ? {
          ok: true,
          data: check.data,
          text: answer.artifact.parts?.find((p) => typeof p.text === 'string')?.text ?? null,
          result: check.result,
          signature: answer.artifact.metadata?.svc_signature as string,
        }
      : { ok: false, error: `the member's result does not verify: ${check.reason}` }
  } catch (err) {
    outcome = { ok: false, error: (err as Error).message.slice(0, 500) }
  }
  const ended = await inTransaction(deps.ctx.db, async (trx) => {
    const hop = (await store.hopById(trx, hopId))!
    const now = deps.ctx.now()
    const state = outcome.ok ? ('completed' as const) : ('failed' as const)
    const receipt = await hopReceipt(deps, trx, team, hop, {
      state,
      ...(outcome.ok
        ? {
            output_sha256: (outcome.result as { output_sha256: string }).output_sha256,
            agent_result: outcome.result,
            agent_signature: outcome.signature,
          }
        : { error: outcome.error }),
      at: now.toISOString(),
    })
    await store.endHop(trx, hopId, {
      state,
      ended_at: now,
      receipt_id: receipt.id,
      receipt_leaf_hash: receipt.leafHash,
      ...(outcome.ok
        ? {
            output_sha256: (outcome.result as { output_sha256: string }).output_sha256,
            agent_result: JSON.stringify(outcome.result),
            agent_signature: outcome.signature,
            output: JSON.stringify({ text: outcome.text, data: outcome.data }),
          }
        : { error: outcome.error }),
    })
    await teamEvent(
      deps,
      trx,
      team,
      { type: 'agent', id: input.agent_did },
      'team.hop',
      {
        hop_id: hopId,
        state,
        agent_did: input.agent_did,
        receipt_id: receipt.id,
      },
      { task_id: hop.task_id },
    )
    return { state, receipt }
  })
  return {
    hop_id: hopId,
    parent_hop_id: parentId,
    state: ended.state,
    agent_did: input.agent_did,
    output: outcome.ok ? { text: outcome.text, data: outcome.data } : null,
    agent_result: outcome.ok ? outcome.result : null,
    agent_signature: outcome.ok ? outcome.signature : null,
    refusal: null,
    error: outcome.ok ? null : outcome.error,
    receipt: { id: ended.receipt.id, leaf_hash: ended.receipt.leafHash },
  }
}
