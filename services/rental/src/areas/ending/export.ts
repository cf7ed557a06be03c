import type { RentalContext } from '../../context.ts'
import type { DisputeService } from '../disputes/index.ts'
import { engagementNotFound, type EngagementService } from '../engagements/index.ts'
import type { FileService } from '../files/index.ts'
import type { InvoiceService } from '../invoices/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import type { RatingService } from '../ratings/index.ts'
import type { RefundService } from '../refunds/index.ts'
import type { StatementService } from '../statements/index.ts'
import type { TaskService } from '../tasks/index.ts'

export interface ExportDeps {
  ctx: Pick<RentalContext, 'db' | 'now' | 'topology' | 'provider'>
  engagements: EngagementService
  tasks: TaskService
  outbox: OutboxService
  statements: StatementService
  invoices: InvoiceService
  refunds: RefundService
  disputes: DisputeService
  ratings: RatingService
  files: FileService
}

export const EXPORT_FORMAT = 'svc-engagement-export/v1'
const TIMEOUT_MS = 5_000

/** A receipt of the engagement: its bundle (`npm run verify` checks it offline) once on the ledger. */
export type ExportedReceipt =
  | { id: string; of: string; state: 'logged'; bundle: Record<string, unknown> }
  | { id: string; of: string; state: 'pending'; problem: string }

/**
 * Everything about the engagement as one JSON document (`svc-engagement-export/v1`): the signed
 * SLA, the escrows with their signatures and release instructions, the signed addenda, the tasks
 * (outputs while kept), the end's answer, the engagement's statement lines, invoices and credit
 * notes, refunds, disputes, ratings and reference, the files' list (no bytes), and every receipt
 * as a `svc-receipt-bundle/v1` fetched from the ledger's public bundle route (inclusion proof and
 * signed checkpoint). A receipt not on the ledger yet is listed `pending`, and the export does not
 * verify until it is. Each section is read through its area's service.
 */
export async function engagementExport(deps: ExportDeps, orgId: string, id: string) {
  const row = await deps.engagements.engagementOf(orgId, id)
  if (!row) throw engagementNotFound(id)
  const now = deps.ctx.now()
  const detail = await deps.engagements.detail(orgId, id)
  const escrows = await deps.engagements.escrowsOf(id)
  const addenda = await deps.engagements.addendaOf(id)
  const taskRows = await deps.tasks.ofEngagement(deps.ctx.db, orgId, id)
  const tasks = await deps.tasks.views(
    orgId,
    taskRows.map((t) => t.id),
  )
  const statement = await deps.statements.ofEngagement(
    orgId,
    { id, created_at: row.created_at },
    new Date(now.getTime() + 1),
  )
  const { invoices, credit_notes } = await deps.invoices.ofEngagement(orgId, id)
  const refunds = await deps.refunds.ofEngagement(orgId, id)
  const disputes = await deps.disputes.ofEngagement(orgId, id)
  const { ratings, reference } = await deps.ratings.ofEngagement(orgId, id)
  const files = await deps.files.listOf(orgId, id)
  const end = row.end_answer as { receipt?: { id: string } } | null
  const wanted: Array<{ id: string; of: string }> = [
    ...addenda.map((a) => ({ id: a.receipt_id, of: `addendum:${a.to_version}` })),
    ...taskRows.filter((t) => t.receipt_id).map((t) => ({ id: t.receipt_id!, of: `task:${t.id}` })),
    ...escrows
      .filter((e) => e.release_receipt_id)
      .map((e) => ({ id: e.release_receipt_id!, of: `release:${e.id}` })),
    ...refunds.filter((r) => r.receipt_id).map((r) => ({ id: r.receipt_id!, of: `refund:${r.id}` })),
    ...disputes
      .filter((d) => d.resolution?.receipt_id)
      .map((d) => ({ id: d.resolution!.receipt_id!, of: `dispute:${d.id}` })),
    ...(end?.receipt ? [{ id: end.receipt.id, of: `end:${id}` }] : []),
  ]
  return {
    format: EXPORT_FORMAT,
    exported_at: now.toISOString(),
    issuer: deps.ctx.provider.did,
    ledger: deps.ctx.topology.ledger.url,
    engagement: {
      ...detail.engagement,
      sla: { ...detail.engagement.sla, signature: row.sla_signature },
      ended_at: row.ended_at?.toISOString() ?? null,
      escrows: escrows.map((e) => ({
        ...deps.engagements.escrowView(e),
        signature: e.signature,
        open_transfer_id: e.open_transfer_id,
        release_instruction: e.release_instruction,
        release_signature: e.release_signature,
        release_receipt_id: e.release_receipt_id,
        return_transfer_id: e.return_transfer_id,
        returned_at: e.returned_at?.toISOString() ?? null,
      })),
    },
    addenda,
    end: row.end_answer,
    tasks,
    statement,
    invoices,
    credit_notes,
    refunds,
    disputes,
    ratings,
    reference,
    files,
    receipts: await receiptsOf(deps, wanted),
  }
}
export type EngagementExport = Awaited<ReturnType<typeof engagementExport>>

async function receiptsOf(deps: ExportDeps, wanted: Array<{ id: string; of: string }>) {
  const indexes = await deps.outbox.ledgerIndexesOf(wanted.map((w) => w.id))
  const receipts: ExportedReceipt[] = []
  for (const w of wanted) {
    const index = indexes.get(w.id)
    if (index === undefined) {
      receipts.push({ ...w, state: 'pending', problem: 'not delivered to the ledger yet' })
      continue
    }
    try {
      receipts.push({ ...w, state: 'logged', bundle: await bundleOf(deps.ctx.topology.ledger.url, index) })
    } catch (err) {
      receipts.push({ ...w, state: 'pending', problem: (err as Error).message })
    }
  }
  return receipts
}

/** The ledger's bundle of the entry at `index` (its latest checkpoint, proof and log key). */
async function bundleOf(ledgerUrl: string, index: number) {
  const res = await fetch(`${ledgerUrl}/v1/entries/${index}/bundle`, {
    signal: AbortSignal.timeout(TIMEOUT_MS),
  })
  if (!res.ok) throw new Error(`the ledger answered ${res.status} for entry ${index}`)
  return (await res.json()) as Record<string, unknown>
}
