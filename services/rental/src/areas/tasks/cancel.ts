import { rentalError } from '../../errors.ts'
import { type TaskDeps, taskDetail } from './service.ts'
import { endTask, taskOf } from './store.ts'

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

/**
 * `POST /api/tasks/{id}/cancel`: the A2A CancelTask's rules. No receipt; the escrow stays unreleasable
 * (a release needs a completed task). Answers the task as `GET /api/tasks/{id}` does.
 */
export async function cancelTaskRoute(deps: TaskDeps, subject: string, id: string) {
  const task = await taskOf(deps.db, subject, id)
  if (!task) throw rentalError('task_not_found', `no task ${id}`)
  if (!(await cancelTask(deps, subject, id))) {
    const now = (await taskOf(deps.db, subject, id))?.state ?? task.state
    throw rentalError('task_not_cancelable', `the task ${id} is already ${now}: it cannot be canceled`)
  }
  return taskDetail(deps, subject, id)
}
