import type { TaskDeps } from './service.ts'
import { endTask } from './store.ts'

/**
 * Cancels the client's task if it has not ended: one conditional update, so of a cancel and the
 * agent's answer only the first counts (the runner drops an answer for a task already ended).
 * True when this call canceled it.
 */
export async function cancelTask(deps: TaskDeps, subject: string, id: string): Promise<boolean> {
  return endTask(
    deps.db,
    id,
    { state: 'canceled', error: 'canceled by the client', at: deps.now() },
    { running: true, subject },
  )
}
