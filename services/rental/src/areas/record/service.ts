import type { MoneyLocale as Lang } from '@svc/kit'
import { createEddsaJcs2022Proof, verifyEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import { didKeyVerificationMethod } from '@svc/trust/did-key'
import type { RentalContext } from '../../context.ts'
import { checkAgentDid, type EngagementService } from '../engagements/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import type { RatingService } from '../ratings/index.ts'
import { clientRef } from '../provider/index.ts'
import type { RevocationService } from '../revocation/index.ts'
import type { TaskService } from '../tasks/index.ts'
import { type CheckpointView, type LedgerReader, type LogKey, mapLimited } from './ledger.ts'
import { ledgerView, proveRow } from './proofs.ts'
import type { OrgClient } from '../../http/index.ts'

/** What the record (receipts, CV, evidence) reads: the context and the areas that hold the facts. */
export interface RecordDeps {
  ctx: Pick<RentalContext, 'provider' | 'now'>
  engagements: EngagementService
  tasks: TaskService
  outbox: OutboxService
  revocation: RevocationService
  ratings: RatingService
  ledger: LedgerReader
}

export interface ReceiptItem {
  id: string
  type: string
  subject: string
  task_id: string | null
  escrow_id: string | null
  issued_at: string
  leaf_hash: string
  ledger_index: number | null
  envelope: { receipt: Record<string, unknown>; signature: string }
  proof: { tree_size: number; hashes: string[] } | null
  verified: boolean
  /** no proof yet for a passing reason: the console shows it on its way, not failed */
  pending: boolean
  problem?: string
}

export interface ReceiptsSlice {
  agent_did: string
  ledger: { url: string; reachable: boolean; error?: string }
  checkpoint: CheckpointView | null
  log_key: LogKey | null
  receipts: ReceiptItem[]
  total: number
  limit: number
  offset: number
}

/**
 * The client's slice of the agent's receipts: `task.completed` of its tasks with the agent,
 * `escrow.released` of its escrows with the agent and its own `agent.revoked`, newest first, each
 * with an RFC 9162 inclusion proof against the ledger's latest checkpoint (read once), checked
 * here too. A receipt not yet on the ledger, or an unreachable ledger, gives `proof: null`.
 */
export async function receiptsSlice(
  deps: RecordDeps,
  subject: string,
  did: string,
  page: { limit: number; offset: number } = { limit: 100, offset: 0 },
): Promise<ReceiptsSlice> {
  checkAgentDid(did)
  const context = new Map<string, { task_id: string | null; escrow_id: string | null }>()
  for (const task of await deps.tasks.tasksWith(subject, did))
    if (task.receipt_id) context.set(task.receipt_id, { task_id: task.id, escrow_id: null })
  for (const escrow of await deps.engagements.releasesWith(subject, did))
    context.set(escrow.release_receipt_id!, { task_id: escrow.task_id, escrow_id: escrow.id })
  const revoked = await deps.revocation.receiptIdOf(subject, did)
  if (revoked) context.set(revoked, { task_id: null, escrow_id: null })
  // the outbox is read before the checkpoint: whatever it says is delivered is in that checkpoint
  const rows = (await deps.outbox.rows([...context.keys()])).reverse()
  const chosen = rows.slice(page.offset, page.offset + page.limit)
  const snapshot = await deps.ledger.snapshot()
  const receipts = await mapLimited(chosen, 8, async (row): Promise<ReceiptItem> => {
    const proved = await proveRow(deps.ledger, snapshot, row)
    const envelope = proved.envelope
    return {
      ...proved,
      type: row.receipt_type,
      subject: row.subject,
      ...context.get(row.id)!,
      issued_at: String(envelope.receipt.issued_at),
    }
  })
  return {
    agent_did: did,
    ...ledgerView(snapshot),
    receipts,
    total: rows.length,
    limit: page.limit,
    offset: page.offset,
  }
}

/**
 * The AgentCV as the rental sees the agent: the catalogue's name and jobs (in `lang`), the client's own
 * record with it (tasks, first and last activity, revoked or not, receipts on the ledger), the
 * rental's overall counts, signed by the provider key with an `eddsa-jcs-2022` Data Integrity
 * proof, answered with its verification.
 */
export async function agentCv(deps: RecordDeps, client: OrgClient, did: string, lang: Lang = 'en') {
  const { agent, engagements } = await deps.engagements.knownAgent(client.orgId, did, lang)
  const revocation = await deps.engagements.revocationOf(client.orgId, did)
  const mine = await deps.tasks.stats(did, client.orgId)
  const tasks = await deps.tasks.tasksWith(client.orgId, did)
  const receiptIds = tasks.flatMap((t) => (t.receipt_id ? [t.receipt_id] : []))
  const onLedger = (await deps.outbox.rows(receiptIds)).filter((r) => r.ledger_index !== null)
  const references = await deps.ratings.references(did, 10)
  const cv = {
    type: 'AgentCV',
    v: 1,
    issuer: deps.ctx.provider.did,
    issued_at: deps.ctx.now().toISOString(),
    subject: did,
    name: agent?.name ?? null,
    description: agent?.description ?? null,
    card_url: agent?.card_url ?? null,
    // the provider organization that publishes the agent (the built-in agents: the platform's)
    provider: agent?.provider ?? null,
    jobs: (agent?.jobs ?? []).map((j) => ({
      id: j.id,
      title: j.title,
      outcome: j.outcome,
      price_fils: j.price_fils,
      currency: j.currency,
    })),
    for_client: {
      ...clientRef(deps.ctx.provider.did, client.orgId, did, {
        engagementDid: engagements.at(-1)?.client_did,
        sessionDid: client.clientDid,
      }),
      engagements: engagements.length,
      ...mine,
      revoked: Boolean(revocation),
      revoked_at: revocation?.revoked_at.toISOString() ?? null,
      receipts_on_ledger: onLedger.length,
      latest_ledger_index: onLedger.length ? Math.max(...onLedger.map((r) => Number(r.ledger_index))) : null,
    },
    overall: await deps.tasks.stats(did),
    // every client's ratings (each bound to its task's receipt) and the latest references
    ratings: await deps.ratings.summary(did),
    references: { total: references.total, latest: references.references },
    ledger: { url: deps.ledger.url, receipts_issuer: deps.ctx.provider.did },
  }
  const { document, verification } = signAsProvider(deps, cv)
  return { cv: document, verification }
}

/** A document signed by the provider identity (`eddsa-jcs-2022`), with the verification of that proof. */
export function signAsProvider(deps: RecordDeps, document: Record<string, unknown>) {
  const method = didKeyVerificationMethod(deps.ctx.provider.did)
  const signed = createEddsaJcs2022Proof(document, {
    seed: deps.ctx.provider.seed,
    verificationMethod: method,
    created: deps.ctx
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z'),
  })
  const verification = verifyEddsaJcs2022Proof(signed)
  return {
    document: signed,
    verification: {
      verified: verification.verified,
      method,
      cryptosuite: 'eddsa-jcs-2022',
      ...(verification.error ? { error: verification.error } : {}),
    },
  }
}
