import type { ServiceLevels } from '../engagements/bodies.ts'

export const TERMS = ['latency_p95', 'success_rate', 'availability', 'incident_response'] as const
export type Term = (typeof TERMS)[number]

/** A term's state; `no_data`: nothing to measure yet (no ended task, no incident). */
export type TermStatus = 'met' | 'breached' | 'no_data'

/**
 * What a breach names: the tasks behind the number, and the leaf hashes of their receipts (failed
 * tasks have none); for incident response, the incidents.
 */
export interface Evidence {
  task_ids: string[]
  receipt_leaf_hashes: string[]
  incident_ids?: string[]
}

/** An incident's response as the incidents area measures it (seconds waited so far when unanswered). */
export interface Response {
  incident_id: string
  seconds: number
  answered: boolean
}

export interface Measurement {
  term: Term
  unit: 'ms' | 'bps' | 's'
  /** `at_most`: the measured value may not exceed the target; `at_least`: may not fall below it. */
  rule: 'at_most' | 'at_least'
  target: number
  measured: number | null
  window: { tasks?: number; days?: number; observed: number }
  status: TermStatus
  evidence: Evidence
}

/** An ended task as the measurement reads it: the receipt's times for a completed task, the task's end for a failed one. */
export interface Ended {
  id: string
  state: 'completed' | 'failed'
  leafHash: string | null
  /** From the `task.completed` receipt's data (started_at, completed_at); null for a failed task. */
  latencyMs: number | null
}

/** Cap on the tasks a breach's evidence names (the worst ones). */
const EVIDENCE_MAX = 20

/** p95 by nearest rank: the ⌈0.95·n⌉-th smallest value. */
export function p95(values: number[]): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil(0.95 * sorted.length) - 1]!
}

/** completed ÷ (completed + failed) in basis points, rounded down; null with no ended task. */
export const rateBps = (completed: number, failed: number) =>
  completed + failed === 0 ? null : Math.floor((completed * 10_000) / (completed + failed))

const evidenceOf = (tasks: Ended[]): Evidence => ({
  task_ids: tasks.slice(0, EVIDENCE_MAX).map((t) => t.id),
  receipt_leaf_hashes: tasks
    .slice(0, EVIDENCE_MAX)
    .map((t) => t.leafHash)
    .filter((h): h is string => h !== null),
})

const statusOf = (measured: number | null, target: number, rule: Measurement['rule']): TermStatus =>
  measured === null
    ? 'no_data'
    : (rule === 'at_most' ? measured <= target : measured >= target)
      ? 'met'
      : 'breached'

/**
 * The terms measured: `completed` the last completed tasks (newest first, at most the latency
 * window), `ended` the last completed or failed ones (at most the success window), `recent` the
 * counts of tasks ended within the availability window.
 */
export function measure(
  levels: ServiceLevels,
  input: {
    completed: Ended[]
    ended: Ended[]
    recent: { completed: number; failed: number }
    incidents: Response[]
  },
): Measurement[] {
  const timed = input.completed.filter((t) => t.latencyMs !== null)
  const latency = p95(timed.map((t) => t.latencyMs!))
  const failed = input.ended.filter((t) => t.state === 'failed')
  const success = rateBps(input.ended.length - failed.length, failed.length)
  const availability = rateBps(input.recent.completed, input.recent.failed)
  // an unanswered incident counts once it has waited past the target (it is late, however it ends)
  const target = levels.incident_response_s
  const responses = input.incidents.filter((r) => r.answered || r.seconds > target)
  const slowest = responses.length ? Math.max(...responses.map((r) => r.seconds)) : null
  const late = responses.filter((r) => r.seconds > target).sort((a, b) => b.seconds - a.seconds)
  return [
    {
      term: 'latency_p95',
      unit: 'ms',
      rule: 'at_most',
      target: levels.latency_p95_ms,
      measured: latency,
      window: { tasks: levels.latency_window_tasks, observed: timed.length },
      status: statusOf(latency, levels.latency_p95_ms, 'at_most'),
      evidence: evidenceOf(
        timed.filter((t) => t.latencyMs! > levels.latency_p95_ms).sort((a, b) => b.latencyMs! - a.latencyMs!),
      ),
    },
    {
      term: 'success_rate',
      unit: 'bps',
      rule: 'at_least',
      target: levels.success_rate_bps,
      measured: success,
      window: { tasks: levels.success_window_tasks, observed: input.ended.length },
      status: statusOf(success, levels.success_rate_bps, 'at_least'),
      evidence: evidenceOf(failed),
    },
    {
      term: 'availability',
      unit: 'bps',
      rule: 'at_least',
      target: levels.availability_bps,
      measured: availability,
      window: {
        days: levels.availability_window_days,
        observed: input.recent.completed + input.recent.failed,
      },
      status: statusOf(availability, levels.availability_bps, 'at_least'),
      evidence: evidenceOf(failed),
    },
    {
      term: 'incident_response',
      unit: 's',
      rule: 'at_most',
      target,
      measured: slowest,
      window: { days: levels.availability_window_days, observed: responses.length },
      status: statusOf(slowest, target, 'at_most'),
      evidence: {
        task_ids: [],
        receipt_leaf_hashes: [],
        incident_ids: late.slice(0, EVIDENCE_MAX).map((r) => r.incident_id),
      },
    },
  ]
}
