import { createHash } from 'node:crypto'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { inTransaction } from '../../db.ts'
import { clientRef, knownAgent, type RecordDeps } from '../record/service.ts'
import { outboxRows, revocationOf, revokeAnswer } from '../record/store.ts'
import { insertRevocation, keepRevokeAnswer, latestClientDid, stopTasks } from './store.ts'

export interface RevocationDeps extends RecordDeps {
  receipts: ReceiptWriter
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
  session: { subject: string; clientDid: string | null },
  did: string,
  reason: string,
): Promise<{ answer: RevokeAnswer; first: boolean }> {
  await knownAgent(deps, session.subject, did)
  const clientDid = await latestClientDid(deps.db, session.subject, did)
  const result = await inTransaction(deps.db, async (trx) => {
    const now = deps.now()
    const inserted = await insertRevocation(trx, session.subject, did, reason, now)
    if (!inserted) return undefined
    const revokedAt = new Date(inserted.revoked_at).toISOString()
    const stopped = await stopTasks(trx, session.subject, did, now)
    const reasonSha256 = sha256Hex(reason)
    const receipt = await deps.receipts.record(trx, {
      type: 'agent.revoked',
      subject: did,
      data: {
        ...clientRef(deps, session.subject, did, { engagementDid: clientDid, sessionDid: session.clientDid }),
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
    await keepRevokeAnswer(trx, session.subject, did, answer)
    return answer
  })
  if (result) return { answer: result, first: true }
  return { answer: await firstAnswer(deps, session.subject, did), first: false }
}

/** The first revoke's answer, with the receipt's ledger index as it is now. */
async function firstAnswer(deps: RevocationDeps, subject: string, did: string): Promise<RevokeAnswer> {
  const kept = (await revokeAnswer(deps.db, subject, did)) as RevokeAnswer | undefined
  if (!kept) {
    // revoked by other means (no answer kept): answer from the row itself
    const row = await revocationOf(deps.db, subject, did)
    return {
      agent_did: did,
      revoked: true,
      revoked_at: row!.revoked_at.toISOString(),
      reason_sha256: sha256Hex(row!.reason),
      tasks_stopped: [],
      receipt: null,
    }
  }
  if (kept.receipt) {
    const [row] = await outboxRows(deps.db, [kept.receipt.id])
    kept.receipt.ledger_index =
      row?.ledger_index === null || row?.ledger_index === undefined ? null : Number(row.ledger_index)
  }
  return kept
}
