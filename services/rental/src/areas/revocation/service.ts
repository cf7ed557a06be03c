import { createHash } from 'node:crypto'
import { keepAnswer, keptAnswer } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction } from '../../db.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor } from '../events/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import { clientRef } from '../provider/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { OrgClient } from '../../http/index.ts'

/** The scope under which a client's first revoke answer is kept (key: the agent DID). */
export const REVOKE_SCOPE = 'agent.revoke'

export interface RevocationDeps {
  ctx: Pick<RentalContext, 'db' | 'receipts' | 'provider' | 'now'>
  engagements: EngagementService
  tasks: TaskService
  outbox: OutboxService
}

/** The first answer of the client's revoke of the agent, as kept. */
export async function revokeAnswer(deps: RevocationDeps, subject: string, did: string) {
  return (await keptAnswer(deps.ctx.db, subject, REVOKE_SCOPE, did))?.body as RevokeAnswer | undefined
}

export interface RevokeAnswer {
  agent_did: string
  revoked: true
  revoked_at: string
  reason_sha256: string
  tasks_stopped: string[]
  receipt: { id: string; type: 'agent.revoked'; leaf_hash: string; ledger_index: number | null } | null
}

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * The client's kill switch on an agent, in one transaction: the revocation (no new task for the
 * agent under any of the client's engagements: the tasks area checks it), the client's unfinished
 * tasks with the agent failed (`agent revoked`), and the `agent.revoked` receipt through the
 * outbox (subject the agent DID; the client DID or a pairwise hash, the reason's SHA-256 and the
 * time: never the reason itself). A second revoke answers the first.
 */
export async function revoke(
  deps: RevocationDeps,
  client: OrgClient,
  did: string,
  reason: string,
  actor: Actor,
): Promise<{ answer: RevokeAnswer; first: boolean }> {
  await deps.engagements.knownAgent(client.orgId, did)
  const clientDid = await deps.engagements.latestClientDid(client.orgId, did)
  const result = await inTransaction(deps.ctx.db, async (trx) => {
    const now = deps.ctx.now()
    const inserted = await deps.engagements.revoke(trx, client.orgId, did, reason, now)
    if (!inserted) return undefined
    const revokedAt = new Date(inserted.revoked_at).toISOString()
    const stopped = await deps.tasks.stopWith(trx, client.orgId, did, 'agent revoked', now, actor)
    const reasonSha256 = sha256Hex(reason)
    const known = { engagementDid: clientDid, sessionDid: client.clientDid }
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'agent.revoked',
      subject: did,
      data: {
        ...clientRef(deps.ctx.provider.did, client.orgId, did, known),
        reason_digest: `sha256:${reasonSha256}`,
        revoked_at: revokedAt,
        tasks_stopped: stopped.length,
      },
    })
    const answer: RevokeAnswer = {
      agent_did: did,
      revoked: true,
      revoked_at: revokedAt,
      reason_sha256: reasonSha256,
      tasks_stopped: stopped,
      receipt: { id: receipt.id, type: 'agent.revoked', leaf_hash: receipt.leafHash, ledger_index: null },
    }
    await keepAnswer(trx, {
      owner: client.orgId,
      scope: REVOKE_SCOPE,
      key: did,
      digest: did,
      status: 200,
      body: answer,
    })
    return answer
  })
  if (result) return { answer: result, first: true }
  return { answer: await firstAnswer(deps, client.orgId, did), first: false }
}

/** The first revoke's answer, with the receipt's ledger index as it is now. */
async function firstAnswer(deps: RevocationDeps, subject: string, did: string): Promise<RevokeAnswer> {
  const kept = await revokeAnswer(deps, subject, did)
  if (!kept) {
    // revoked by other means (no answer kept): answer from the row itself
    const row = await deps.engagements.revocationOf(subject, did)
    return {
      agent_did: did,
      revoked: true,
      revoked_at: row!.revoked_at.toISOString(),
      reason_sha256: sha256Hex(row!.reason),
      tasks_stopped: [],
      receipt: null,
    }
  }
  if (kept.receipt) kept.receipt.ledger_index = await deps.outbox.ledgerIndexOf(kept.receipt.id)
  return kept
}
