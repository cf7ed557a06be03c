import type { RentalDb } from '../../db.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskDeps } from './service.ts'
import { endTask, type TaskEnd, type TaskRow } from './store.ts'
import type { EventType } from '../events/index.ts'
import { tellAgent } from './agent-cancel.ts'

type TaskState = TaskRow['state']

/** The task, as its events name it: the stream is the task's id, the organization its owner. */
export interface TaskRef {
  id: string
  orgId: string
  /** null for a trial's task (its trial's events name it) */
  engagementId: string | null
}

/**
 * A task's events, each one statement in the caller's transaction (`events.record`): state
 * changes (`task.state_changed`, `{from, to, …}`) and trace lines (`task.trace`).
 */
export function taskEvents(events: EventService) {
  const subjectsOf = (task: TaskRef): Record<string, string> =>
    task.engagementId ? { task_id: task.id, engagement_id: task.engagementId } : { task_id: task.id }
  const record = (
    trx: RentalDb,
    task: TaskRef,
    type: EventType,
    actor: Actor,
    data: Record<string, unknown>,
  ) =>
    events.record(trx, { orgId: task.orgId, type, stream: task.id, subjects: subjectsOf(task), actor, data })
  return {
    /** A trace line, then a state change, in one statement (the agent's answer ending its task). */
    traceAndChange: (
      trx: RentalDb,
      task: TaskRef,
      trace: { actor: Actor; line: Record<string, unknown> },
      change: { actor: Actor; change: { from: TaskState; to: TaskState } & Record<string, unknown> },
    ) =>
      events.recordAll(trx, task.id, [
        {
          orgId: task.orgId,
          type: 'task.trace',
          subjects: subjectsOf(task),
          actor: trace.actor,
          data: trace.line,
        },
        {
          orgId: task.orgId,
          type: 'task.state_changed',
          subjects: subjectsOf(task),
          actor: change.actor,
          data: change.change,
        },
      ]),
    stateChanged: (
      trx: RentalDb,
      task: TaskRef,
      actor: Actor,
      change: { from: TaskState; to: TaskState } & Record<string, unknown>,
    ) => record(trx, task, 'task.state_changed', actor, change),
    trace: (trx: RentalDb, task: TaskRef, actor: Actor, line: Record<string, unknown>) =>
      record(trx, task, 'task.trace', actor, line),
  }
}
export type TaskEvents = ReturnType<typeof taskEvents>

export const refOf = (row: Pick<TaskRow, 'id' | 'org_id' | 'engagement_id'>): TaskRef => ({
  id: row.id,
  orgId: row.org_id,
  engagementId: row.engagement_id,
})

/**
 * Ends a task that has not ended (failed or canceled) and records the change, in `trx`: one
 * conditional update that answers the state it left; the agent's task is canceled after the commit. Undefined when the task had already ended.
 */
export async function endRunning(
  deps: Pick<TaskDeps, 'events' | 'ended' | 'jobs'>,
  trx: RentalDb,
  id: string,
  end: TaskEnd,
  actor: Actor,
  subject?: string,
): Promise<TaskRef | undefined> {
  const ended = await endTask(trx, id, end, { running: true, subject })
  if (!ended) return undefined
  const task = { id, orgId: ended.orgId, engagementId: ended.engagementId }
  await taskEvents(deps.events).stateChanged(trx, task, actor, {
    from: ended.from,
    to: end.state,
    error: end.error,
  })
  await deps.ended(trx, { ...task, state: end.state }, actor)
  // the agent may hold a task for it (running, or asking): it is told once this commits
  await tellAgent(deps, trx, id)
  return task
}
