import { countIn } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementRow } from '../engagements/index.ts'
import { capacityTurn, unfinishedCount } from './store.ts'

/** Retry-After when the engagement is at its concurrency: no one knows when a task ends; a few seconds. */
export const CONCURRENCY_RETRY_AFTER_S = 5
const MINUTE_MS = 60_000

/**
 * The engagement's capacity at a task's creation (and a retry), in the transaction that writes
 * the task, after the engagement's row lock (shared by creations): under a concurrency limit the
 * engagement's creations take turns on a transaction-scoped advisory lock, so they are counted one
 * after the other (of twenty at once under a limit of five, exactly five pass). The limits come
 * with the engagement's row the caller has read already: an engagement without limits costs no
 * query and takes no turn.
 * The minute's count is a fixed window in the kv (Redis when configured: shared by the rental's
 * instances; counted in this process while Redis does not answer, as the kit's rate limits do).
 * Over a limit: 429 `capacity_exceeded` with Retry-After.
 */
export async function admitTask(
  deps: Pick<RentalContext, 'kv' | 'log' | 'now'>,
  trx: RentalDb,
  engagement: Pick<EngagementRow, 'id' | 'max_concurrent_tasks' | 'tasks_per_minute'>,
) {
  const { max_concurrent_tasks: max, tasks_per_minute: perMinute } = engagement
  if (max === null && perMinute === null) return
  if (max !== null) {
    await capacityTurn(trx, engagement.id)
    const unfinished = await unfinishedCount(trx, engagement.id)
    if (unfinished >= max)
      throw rentalError(
        'capacity_exceeded',
        `the engagement has ${unfinished} unfinished tasks: its max_concurrent_tasks is ${max}`,
        { 'retry-after': String(CONCURRENCY_RETRY_AFTER_S) },
      )
  }
  if (perMinute !== null) {
    const now = deps.now().getTime()
    const window = Math.floor(now / MINUTE_MS)
    const count = await countIn(deps.kv, `capacity:${engagement.id}:${window}`, MINUTE_MS, { log: deps.log })
    if (count > perMinute)
      throw rentalError(
        'capacity_exceeded',
        `the engagement takes at most ${perMinute} new tasks a minute (its tasks_per_minute)`,
        { 'retry-after': String(Math.max(1, Math.ceil(((window + 1) * MINUTE_MS - now) / 1000))) },
      )
  }
}
