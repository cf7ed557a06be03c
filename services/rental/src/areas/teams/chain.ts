import { verifyAgentResult } from '@svc/trust/agent-result'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { SlaTeam } from '../engagements/bodies.ts'
import type { Actor } from '../events/index.ts'
import type { ProvedReceipt, RecordService } from '../record/index.ts'
import { teamDetail, teamEvent, type TeamDeps } from './service.ts'
import * as store from './store.ts'
import type { HopRow } from './store.ts'

type Node = ReturnType<typeof nodeOf> & { children: Node[] }

function nodeOf(
  hop: Pick<HopRow, 'id' | 'parent_id' | 'depth' | 'agent_did' | 'refusal' | 'error' | 'cost_fils'> & {
    state: string
    input_sha256: string | null
    output_sha256: string | null
    agent_result: unknown
    agent_signature: string | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
    created_at: Date
    ended_at: Date | null
  },
  proofs: Map<string, ProvedReceipt>,
) {
  const proved = hop.receipt_id ? proofs.get(hop.receipt_id) : undefined
  return {
    hop_id: hop.id,
    parent_hop_id: hop.parent_id,
    depth: hop.depth,
    agent_did: hop.agent_did,
    state: hop.state,
    refusal: hop.refusal,
    error: hop.error,
    cost_fils: Number(hop.cost_fils),
    input_sha256: hop.input_sha256,
    output_sha256: hop.output_sha256,
    agent_result: hop.agent_result ?? null,
    agent_signature: hop.agent_signature,
    // checked here for the reader's convenience; the chain carries all it takes to check it offline
    signature_verified:
      hop.agent_result !== null && hop.agent_result !== undefined
        ? verifyAgentResult(hop.agent_result, hop.agent_signature) &&
          (hop.agent_result as { agent_did?: string }).agent_did === hop.agent_did
        : null,
    // the receipt as the ledger holds it (its envelope) and its inclusion proof, or pending
    receipt: hop.receipt_id
      ? {
          id: hop.receipt_id,
          leaf_hash: hop.receipt_leaf_hash!,
          ledger_index: proved?.ledger_index ?? null,
          envelope: proved?.envelope ?? null,
          proof: proved?.proof ?? null,
          verified: proved?.verified ?? false,
          pending: proved?.pending ?? true,
          ...(proved?.problem ? { problem: proved.problem } : {}),
        }
      : null,
    created_at: hop.created_at.toISOString(),
    ended_at: hop.ended_at?.toISOString() ?? null,
  }
}

/**
 * The delegation tree of a team task: the root is the lead's run of the task (its signed result
 * and `task.completed` receipt are the task's), each child a hop with its `team.hop` receipt; each
 * receipt with its inclusion proof against one ledger checkpoint, given with the log key, so the
 * whole tree is checked offline.
 */
export async function chainOf(
  deps: TeamDeps & { record: RecordService },
  orgId: string,
  teamId: string,
  taskId: string,
) {
  const team = await teamDetail(deps, orgId, teamId)
  const hops = await store.hopsOfTask(deps.ctx.db, taskId)
  const root = hops.find((h) => h.parent_id === null)
  const task = root ? await deps.tasks.taskById(deps.ctx.db, taskId) : undefined
  if (!root || root.team_id !== team.id || !task || task.org_id !== orgId)
    throw rentalError('team_task_not_found', `no task ${taskId} of team ${teamId}`)
  const ids = [task.receipt_id, ...hops.map((h) => h.receipt_id)].filter((r): r is string => r !== null)
  const { receipts: proofs, ...ledger } = await deps.record.proofs(ids)
  const nodes = new Map<string, Node>()
  nodes.set(root.id, {
    ...nodeOf(
      {
        ...root,
        state: task.state,
        output_sha256: task.output_sha256,
        agent_result: task.agent_result,
        agent_signature: task.agent_signature,
        receipt_id: task.receipt_id,
        receipt_leaf_hash: task.receipt_leaf_hash,
        ended_at: task.completed_at ?? null,
      },
      proofs,
    ),
    children: [],
  })
  for (const hop of hops) if (hop.id !== root.id) nodes.set(hop.id, { ...nodeOf(hop, proofs), children: [] })
  for (const hop of hops) if (hop.parent_id) nodes.get(hop.parent_id)?.children.push(nodes.get(hop.id)!)
  return {
    team_id: team.id,
    task_id: taskId,
    engagement_id: team.engagement_id,
    terms_hash: team.terms_hash,
    hops: hops.length,
    refused: hops.filter((h) => h.state === 'refused').length,
    ...ledger,
    root: nodes.get(root.id)!,
  }
}

/**
 * Ends the team: its engagement through the ending area (running tasks canceled, escrows settled
 * once), then, once, each member's share of what was released to the lead (net of fees) moved on
 * the rail from `payout:<lead>` to `payout:<member>` (key `team-share:<team>:<member>`), with a
 * `team.ended` receipt. A second end: 409 `team_ended`.
 */
export async function endTeam(deps: TeamDeps, orgId: string, id: string, actor: Actor) {
  const team = await teamDetail(deps, orgId, id)
  if (team.state === 'ended')
    throw rentalError('team_ended', `the team is ended (since ${team.ended_at?.toISOString()})`)
  if (team.state !== 'hired' || !team.engagement_id)
    throw rentalError('team_not_hired', `the team is ${team.state}: nothing to end`)
  let engagementEnd: unknown = null
  try {
    engagementEnd = await deps.ending.endCanceling(orgId, team.engagement_id, actor)
  } catch (err) {
    // ended already (by POST /api/engagements/{id}/end, or a first team end cut short): shares still due once
    if ((err as { code?: string }).code !== 'engagement_ended') throw err
  }
  const escrows = await deps.engagements.escrowsOf(team.engagement_id)
  const net = escrows
    .filter((e) => e.state === 'released')
    // what the lead's payout received: the amount less the fee and the VAT inside it
    .reduce((sum, e) => sum + Number(e.amount_fils) - Number(e.fee_fils ?? 0) - Number(e.vat_fils ?? 0), 0)
  const terms = team.terms as SlaTeam
  return inTransaction(deps.ctx.db, async (trx) => {
    const locked = (await store.teamOf(trx, orgId, id, true))!
    if (locked.state === 'ended')
      throw rentalError('team_ended', `the team is ended (since ${locked.ended_at?.toISOString()})`)
    const now = deps.ctx.now()
    const shares = []
    for (const m of terms.members) {
      const amount = Math.floor((net * m.share_bps) / 10_000)
      let transferId: string | null = null
      if (amount > 0)
        transferId = (
          await deps.ctx.rail.transfer(trx, {
            idempotencyKey: `team-share:${id}:${m.agent_did}`,
            kind: 'team_share',
            postings: [
              { account: `payout:${team.lead_did}`, amount: -amount },
              { account: `payout:${m.agent_did}`, amount },
            ],
            memo: { team_id: id, engagement_id: team.engagement_id, share_bps: m.share_bps },
          })
        ).id
      shares.push({
        agent_did: m.agent_did,
        share_bps: m.share_bps,
        amount_fils: amount,
        transfer_id: transferId,
      })
    }
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'team.ended',
      subject: id,
      data: {
        team_id: id,
        engagement_id: team.engagement_id,
        terms_hash: team.terms_hash,
        lead_did: team.lead_did,
        released_net_fils: net,
        shares,
        currency: 'AED',
        ended_at: now.toISOString(),
      },
    })
    const answer = {
      team_id: id,
      state: 'ended' as const,
      ended_at: now.toISOString(),
      engagement_id: team.engagement_id!,
      released_net_fils: net,
      shares,
      receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
    }
    await store.markTeamEnded(trx, id, answer, now)
    await teamEvent(deps, trx, locked, actor, 'team.ended', {
      from: 'hired',
      to: 'ended',
      released_net_fils: net,
      receipt_id: receipt.id,
    })
    return { ...answer, engagement_end: engagementEnd }
  })
}
