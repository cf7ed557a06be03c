import { csvLine } from '@svc/kit'
import { rentalError } from '../../errors.ts'
import { firstWords } from '../tasks/index.ts'
import type { BatchDeps } from './service.ts'
import { batchOf, itemPage } from './store.ts'

/** Items read per page: an export of 1000 items is ten pages, written as they are read. */
const PAGE = 100

export type ExportFormat = 'jsonl' | 'csv'

export interface ExportRow {
  index: number
  state: string
  task_id: string | null
  output: { text: string | null; data: unknown } | null
  output_expired: boolean
  receipt_leaf_hash: string | null
  error: string | null
}

export const CSV_COLUMNS = [
  'index',
  'state',
  'task_id',
  'output_text',
  'output_data',
  'output_expired',
  'receipt_leaf_hash',
  'error',
] as const

function csvOf(row: ExportRow): string {
  return csvLine([
    String(row.index),
    row.state,
    row.task_id ?? '',
    row.output?.text ?? '',
    row.output ? JSON.stringify(row.output.data) : '',
    String(row.output_expired),
    row.receipt_leaf_hash ?? '',
    row.error ?? '',
  ])
}

/** The batch (404 for another organization's), checked before the export starts streaming. */
export async function exportableBatch(deps: BatchDeps, orgId: string, id: string) {
  const batch = await batchOf(deps.db, orgId, id)
  if (!batch) throw rentalError('batch_not_found', `no batch ${id}`)
  return batch
}

/** The batch's rows, a page of items (and their tasks, in one query) at a time. */
export async function* exportRows(
  deps: BatchDeps,
  orgId: string,
  batchId: string,
): AsyncGenerator<ExportRow> {
  for (let from = 0; ;) {
    const items = await itemPage(deps.db, batchId, from, PAGE)
    if (!items.length) return
    const views = await deps.tasks.views(
      orgId,
      items.flatMap((i) => (i.task_id ? [i.task_id] : [])),
    )
    const byId = new Map(views.map((v) => [v.id, v]))
    for (const item of items) {
      const task = item.task_id ? byId.get(item.task_id) : undefined
      yield {
        index: item.idx,
        state: item.state,
        task_id: item.task_id,
        output: task?.output ? { text: task.output.text, data: task.output.data } : null,
        output_expired: task?.output_expired ?? false,
        receipt_leaf_hash: task?.receipt?.leaf_hash ?? null,
        error: item.error ?? task?.error ?? null,
      }
    }
    from = items[items.length - 1]!.idx + 1
  }
}

/** The export as text chunks: JSON Lines (one object a line), or CSV with a header row. */
export async function* exportLines(
  deps: BatchDeps,
  orgId: string,
  batchId: string,
  format: ExportFormat,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvLine([...CSV_COLUMNS])
  for await (const row of exportRows(deps, orgId, batchId))
    yield format === 'csv' ? csvOf(row) : `${JSON.stringify(row)}\n`
}

/** A page of the batch's items from index `from` (the detail screen's list of its tasks). */
export async function itemList(deps: BatchDeps, orgId: string, id: string, from: number, limit: number) {
  const batch = await exportableBatch(deps, orgId, id)
  const items = await itemPage(deps.db, batch.id, from, limit + 1)
  const shown = items.slice(0, limit)
  // what names each item for a person: its task's input (or its own text, before its task is made)
  const labels = await deps.tasks.labels(
    orgId,
    shown.flatMap((i) => (i.task_id ? [i.task_id] : [])),
    'en',
  )
  return {
    items: shown.map((i) => ({
      index: i.idx,
      state: i.state,
      task_id: i.task_id,
      input_preview: i.task_id ? (labels.get(i.task_id)?.input_preview ?? null) : firstWords(i.text),
      error: i.error,
    })),
    next_from: items.length > limit ? shown[shown.length - 1]!.idx + 1 : null,
  }
}
