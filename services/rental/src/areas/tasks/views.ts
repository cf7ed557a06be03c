import { retryNote } from './attempts.ts'
import { fileIdsOf } from './file-handoff.ts'
import type { Page } from '@svc/kit'
import { rentalError } from '../../errors.ts'
import type { TaskDeps } from './service.ts'
import { purgeOutputs } from './retention-store.ts'
import { type TaskRow, taskOf, tasksOf } from './store.ts'

/** What a task's view reads besides its row: its receipt's ledger index and its escrow. */
interface Around {
  ledgerIndex: number | null
  escrow: { id: string } | undefined
}

/** The views of several tasks: their receipts and escrows read in one query each, not per task. */
async function taskViews(deps: TaskDeps, rows: TaskRow[]) {
  const [indexes, escrows] = await Promise.all([
    deps.outbox.ledgerIndexesOf(rows.flatMap((r) => (r.receipt_id ? [r.receipt_id] : []))),
    deps.engagements.escrowsOfTasks(rows.map((r) => r.id)),
  ])
  const views = []
  for (const row of rows)
    views.push(
      await taskView(deps, row, {
        ledgerIndex: row.receipt_id ? (indexes.get(row.receipt_id) ?? null) : null,
        escrow: escrows.get(row.id),
      }),
    )
  return views
}

export async function taskView(deps: TaskDeps, row: TaskRow, around: Around) {
  const now = deps.now()
  let output = row.output === null ? null : { text: row.output_text, data: row.output }
  if (output && row.output_expires_at && row.output_expires_at <= now) {
    // past its time the output goes, unless a legal hold covers it
    const held = await deps.held?.()
    const covered =
      held &&
      (held.orgs.includes(row.org_id) || (row.engagement_id && held.engagements.includes(row.engagement_id)))
    if (!covered) {
      await purgeOutputs(deps.db, now, row.id)
      output = null
    }
  }
  const expired = row.state === 'completed' && output === null
  const { ledgerIndex, escrow } = around
  // between two attempts: the last one's error, and when the next starts (A2A: working, with a status message)
  const runs = row.runs as Array<{ attempt: number; at: string; error: string }> | null
  const waiting = (row.state === 'working' || row.state === 'submitted') && row.retry_at && runs?.length
  const message = expired
    ? 'the output is no longer kept (RENTAL_OUTPUT_TTL_S); the receipt and its hashes stay'
    : waiting
      ? retryNote(runs[runs.length - 1]!.error, row.retry_at!)
      : undefined
  return {
    id: row.id,
    engagement_id: row.engagement_id,
    trial_id: row.trial_id,
    agent_did: row.agent_did,
    agent_version: row.agent_version,
    state: row.state,
    async: row.async,
    price_fils: Number(row.price_fils),
    currency: 'AED',
    escrow_id: escrow?.id ?? null,
    input_sha256: row.input_sha256,
    output,
    output_sha256: row.output_sha256,
    output_expires_at: row.output_expires_at?.toISOString() ?? null,
    output_expired: expired,
    ...(message ? { message } : {}),
    receipt: row.receipt_id
      ? {
          id: row.receipt_id,
          leaf_hash: row.receipt_leaf_hash,
          ledger_index: ledgerIndex,
        }
      : null,
    agent_result: row.agent_result,
    agent_signature: row.agent_signature,
    error: row.error,
    runs,
    file_ids: fileIdsOf(row),
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
    trace_id: row.trace_id,
    trace_url:
      row.trace_id && deps.config.traceUrlTemplate
        ? deps.config.traceUrlTemplate.replace('{trace_id}', row.trace_id)
        : null,
  }
}
export type TaskView = Awaited<ReturnType<typeof taskView>>

export async function taskDetail(deps: TaskDeps, subject: string, id: string) {
  const row = await taskOf(deps.db, subject, id)
  if (!row) throw rentalError('task_not_found', `no task ${id}`)
  return (await taskViews(deps, [row]))[0]!
}

export async function taskList(deps: TaskDeps, subject: string, page: Page) {
  const rows = await tasksOf(deps.db, subject, page.limit, page.offset)
  return { tasks: await taskViews(deps, rows), limit: page.limit, offset: page.offset }
}
