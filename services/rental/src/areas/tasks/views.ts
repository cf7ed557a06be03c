import { retryNote } from './attempts.ts'
import { fileIdsOf } from './file-handoff.ts'
import { money, type MoneyLocale, type Page } from '@svc/kit'
import { rentalError } from '../../errors.ts'
import { catalogueNamesIn } from '../catalogue/index.ts'
import type { EngagementTerms, TaskDeps } from './service.ts'
import { purgeOutputs } from './retention-store.ts'
import { type TaskRow, taskOf, tasksOf, tasksOfIds } from './store.ts'

/** What a task's view reads besides its row: its receipt's ledger index and its escrow. */
interface Around {
  ledgerIndex: number | null
  escrow: { id: string; state?: EscrowState } | undefined
  /** the job's title and agent's name (read for this one task when not given: never inside a transaction) */
  names?: TaskNames | undefined
}

type EscrowState = 'offered' | 'open' | 'released' | 'returned' | 'withdrawn'

/** What names a task for a person: its engagement's job and title, its agent's display name, the language. */
interface TaskNames {
  jobId: string | null
  jobTitle: string | null
  agentName: string | null
  lang: MoneyLocale
}

/** The job of each task's engagement, its title and the agents' names in `lang`: three queries for any number of tasks. */
export async function namesOf(deps: TaskDeps, rows: TaskRow[], lang: MoneyLocale) {
  const jobs = await deps.engagements.jobIdsOf(
    rows.flatMap((r) => (r.engagement_id ? [r.engagement_id] : [])),
  )
  const [titles, agents] = await Promise.all([
    deps.catalogue.titlesOf([...jobs.values()], lang),
    deps.catalogue.agentNamesOf(
      rows.map((r) => r.agent_did),
      lang,
    ),
  ])
  return (row: TaskRow): TaskNames => {
    const jobId = (row.engagement_id && jobs.get(row.engagement_id)) || null
    return {
      jobId,
      jobTitle: (jobId && titles.get(jobId)) || null,
      agentName: agents.get(row.agent_did) ?? null,
      lang,
    }
  }
}

/**
 * The names of a task of the engagement `terms` were read for with their names (`names: true`), in
 * `lang`, as `namesOf` answers them: no read. Undefined when they were read without.
 */
export function namesOfTerms(terms: EngagementTerms, lang: MoneyLocale = 'en'): TaskNames | undefined {
  if (!terms.names) return undefined
  const { jobTitle, agentName } = catalogueNamesIn(lang, terms.names)
  return {
    jobId: terms.engagement.job_id || null,
    jobTitle: jobTitle || null,
    agentName: agentName ?? null,
    lang,
  }
}

/**
 * One task's names (for a view made inside a transaction: read before it, as the catalogue and
 * engagements answer outside it).
 */
export const taskNamesOf = async (deps: TaskDeps, row: TaskRow, lang: MoneyLocale = 'en') =>
  (await namesOf(deps, [row], lang))(row)

/** The input's first words: at most `max` characters, cut at a space, with an ellipsis when cut. */
export function firstWords(text: string | null, max = 80): string | null {
  if (text === null) return null
  const flat = text.replace(/\s+/g, ' ').trim()
  if (flat.length <= max) return flat
  const cut = flat.slice(0, max)
  const space = cut.lastIndexOf(' ')
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** The views of several tasks: their receipts, escrows and names read in one query each, not per task. */
async function taskViews(deps: TaskDeps, rows: TaskRow[], lang: MoneyLocale = 'en') {
  const [indexes, escrows, names] = await Promise.all([
    deps.outbox.ledgerIndexesOf(rows.flatMap((r) => (r.receipt_id ? [r.receipt_id] : []))),
    deps.engagements.escrowsOfTasks(rows.map((r) => r.id)),
    namesOf(deps, rows, lang),
  ])
  const views = []
  for (const row of rows)
    views.push(
      await taskView(deps, row, {
        ledgerIndex: row.receipt_id ? (indexes.get(row.receipt_id) ?? null) : null,
        escrow: escrows.get(row.id),
        names: names(row),
      }),
    )
  return views
}

export async function taskView(deps: TaskDeps, row: TaskRow, around: Around) {
  const names = around.names ?? (await namesOf(deps, [row], 'en'))(row)
  const now = deps.now()
  let output = row.output === null ? null : { text: row.output_text, data: row.output }
  let input = row.input_text
  if (output && row.output_expires_at && row.output_expires_at <= now) {
    // past its time the output goes, unless a legal hold covers it
    const held = await deps.held?.()
    const covered =
      held &&
      (held.orgs.includes(row.org_id) || (row.engagement_id && held.engagements.includes(row.engagement_id)))
    if (!covered) {
      await purgeOutputs(deps.db, now, row.id)
      output = null
      input = null
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
    job_id: names.jobId,
    job_title: names.jobTitle,
    agent_did: row.agent_did,
    agent_name: names.agentName,
    agent_version: row.agent_version,
    state: row.state,
    async: row.async,
    price_fils: Number(row.price_fils),
    currency: 'AED',
    price: money(Number(row.price_fils), 'AED', names.lang),
    escrow_id: escrow?.id ?? null,
    escrow_state: escrow?.state ?? null,
    input_text: input,
    input_preview: firstWords(input),
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
    duration_ms: row.completed_at
      ? row.completed_at.getTime() - (row.started_at ?? row.created_at).getTime()
      : null,
    trace_id: row.trace_id,
    trace_url:
      row.trace_id && deps.config.traceUrlTemplate
        ? deps.config.traceUrlTemplate.replace('{trace_id}', row.trace_id)
        : null,
  }
}
export type TaskView = Awaited<ReturnType<typeof taskView>>

/** What names a task in another area's list (executions, approvals): its job's title, its agent's name, its input's first words. */
export interface TaskLabel {
  job_title: string | null
  agent_name: string | null
  input_preview: string | null
}

/**
 * The labels of the organization's tasks among `ids`, by id, in `lang` (an id of another
 * organization or none is absent); the input's words only while the task's texts are kept.
 */
export async function taskLabels(deps: TaskDeps, orgId: string, ids: readonly string[], lang: MoneyLocale) {
  const rows = ids.length ? await tasksOfIds(deps.db, orgId, [...new Set(ids)]) : []
  const names = await namesOf(deps, rows, lang)
  const now = deps.now()
  return new Map<string, TaskLabel>(
    rows.map((row) => {
      const n = names(row)
      const kept = !(row.output_expires_at && row.output_expires_at <= now)
      return [
        row.id,
        {
          job_title: n.jobTitle,
          agent_name: n.agentName,
          input_preview: kept ? firstWords(row.input_text) : null,
        },
      ]
    }),
  )
}

/** A row's task words from `labels` (nulls for no task, or one no longer there). */
export const labelOf = (labels: Map<string, TaskLabel>, taskId: string | null | undefined): TaskLabel =>
  (taskId ? labels.get(taskId) : undefined) ?? { job_title: null, agent_name: null, input_preview: null }

export async function taskDetail(deps: TaskDeps, subject: string, id: string, lang: MoneyLocale = 'en') {
  const row = await taskOf(deps.db, subject, id)
  if (!row) throw rentalError('task_not_found', `no task ${id}`)
  return (await taskViews(deps, [row], lang))[0]!
}

export async function taskList(deps: TaskDeps, subject: string, page: Page, lang: MoneyLocale = 'en') {
  const rows = await tasksOf(deps.db, subject, page.limit, page.offset)
  return { tasks: await taskViews(deps, rows, lang), limit: page.limit, offset: page.offset }
}
