import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Actor, SYSTEM } from '../events/index.ts'
import { endRunning } from './events.ts'
import type { TaskDeps } from './service.ts'
import { taskDetail } from './views.ts'
import { taskOf } from './store.ts'

/**
 * Cancels the client's task if it has not ended: one conditional update, so of a cancel and the
 * agent's answer only the first counts (the runner drops an answer for a task already ended), with
 * its `task.state_changed` event in the same transaction. A task waiting on an approval ends its
 * approval (`canceled`) in the same transaction. True when this call canceled it.
 */
export async function cancelTask(
  deps: TaskDeps,
  subject: string,
  id: string,
  actor: Actor = SYSTEM,
): Promise<boolean> {
  return inTransaction(deps.db, async (trx) => {
    const canceled = await endRunning(
      deps,
      trx,
      id,
      { state: 'canceled', error: 'canceled by the client', at: deps.now(), cause: 'client' },
      actor,
      subject,
    )
    if (canceled) await deps.approvals.taskEnded(trx, id, 'canceled', actor)
    return canceled !== undefined
  })
}

/**
 * `POST /api/tasks/{id}/cancel`: the A2A CancelTask's rules. No receipt; the escrow stays unreleasable
 * (a release needs a completed task). Answers the task as `GET /api/tasks/{id}` does.
 */
export async function cancelTaskRoute(deps: TaskDeps, subject: string, id: string, actor: Actor) {
  const task = await taskOf(deps.db, subject, id)
  if (!task) throw rentalError('task_not_found', `no task ${id}`)
  if (!(await cancelTask(deps, subject, id, actor))) {
    const now = (await taskOf(deps.db, subject, id))?.state ?? task.state
    throw rentalError('task_not_cancelable', `the task ${id} is already ${now}: it cannot be canceled`)
  }
  return taskDetail(deps, subject, id)
}
