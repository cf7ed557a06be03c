import { inTransaction, type RentalDb } from '../../db.ts'
import type { RentalReactions } from '../../reactions.ts'
import type { EngagementConfig } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { AgentAsks } from './dispatch.ts'
import { endRunning } from './events.ts'
import type { TaskDeps } from './service.ts'
import { awaitInput, type TaskRow, taskById } from './store.ts'

/**
 * Where tasks meet approvals (areas/approvals). The approvals area needs the tasks area (it moves
 * waiting tasks on), so tasks cannot `need` it back: the approvals area reacts to `tasks.gate`
 * (src/reactions.ts) when it mounts. Every call runs in the task's transaction.
 */
export interface ApprovalGate {
  /** Whether the engagement's approval policy holds a new task at this price for a member's approval. */
  holds(policy: EngagementConfig['approval'], priceFils: number): boolean
  /** Asks for the approval of a held task (inserted in the same transaction, `input-required`). */
  request(trx: RentalDb, task: HeldTask): Promise<void>
  /** The agent asked for input (A2A input-required or auth-required): its task waits on an approval. */
  agentAsks(trx: RentalDb, task: TaskRow & { engagement_id: string }, asks: AgentAsks): Promise<void>
  /** A waiting task ended otherwise (canceled): its pending approval ends with it. */
  taskEnded(trx: RentalDb, taskId: string, state: 'canceled', actor: Actor): Promise<void>
}

/** A task of an engagement that ended unpaid (failed, canceled or rejected), in its transaction. */
export type TaskEndHook = (
  trx: RentalDb,
  task: { id: string; orgId: string; engagementId: string | null; state: 'failed' | 'canceled' | 'rejected' },
  actor: Actor,
) => Promise<void>

export interface HeldTask {
  id: string
  orgId: string
  engagementId: string
  priceFils: number
  text: string
  actor: Actor
}

/** Without the approvals area: nothing is held, and an agent's question cannot be answered. */
export const NO_APPROVALS: ApprovalGate = {
  holds: () => false,
  request: async () => {
    throw new Error('no approvals area: a task cannot be held')
  },
  agentAsks: async () => {
    throw new Error('the agent asked for input, and no approvals area can answer it')
  },
  taskEnded: async () => {},
}

/** The gate tasks call: the approvals area's `tasks.gate` reaction, read at each call (NO_APPROVALS without one). */
export function reactingGate(reactions: RentalReactions): ApprovalGate {
  const gate = () => reactions.one('tasks.gate', NO_APPROVALS)
  return {
    holds: (policy, priceFils) => gate().holds(policy, priceFils),
    request: (trx, task) => gate().request(trx, task),
    agentAsks: (trx, task, asks) => gate().agentAsks(trx, task, asks),
    taskEnded: (trx, taskId, state, actor) => gate().taskEnded(trx, taskId, state, actor),
  }
}

/** The agent asked: its working task waits in `input-required` on an approval, in one transaction. */
export async function awaitAgentInput(deps: TaskDeps, id: string, asked: AgentAsks) {
  await inTransaction(deps.db, async (trx) => {
    const task = await taskById(trx, id, true)
    const agent: Actor = { type: 'agent', id: task?.agent_did ?? '' }
    // a trial's task has no engagement whose approvals could answer: it fails, saying why
    if (task?.engagement_id === null) {
      const error = `the agent asked for input (${asked.state}); a trial's task cannot wait for an answer`
      await endRunning(deps, trx, id, { state: 'failed', error, at: deps.now(), cause: 'agent' }, agent)
      return
    }
    // a task canceled or ended meanwhile: the question is dropped with it
    if (!task || !(await awaitInput(trx, id, asked.agentTaskId))) return
    await moved(deps.events, trx, task, agent, {
      from: 'working',
      to: 'input-required',
      agent_state: asked.state,
    })
    await deps.approvals.agentAsks(trx, { ...task, engagement_id: task.engagement_id }, asked)
  })
}

/** A task's state change moved by approvals, as `task.state_changed` (`{from, to, …}`) in its stream. */
export const moved = (
  events: EventService,
  trx: RentalDb,
  task: Pick<TaskRow, 'id' | 'org_id' | 'engagement_id'>,
  actor: Actor,
  change: { from: TaskRow['state']; to: TaskRow['state'] } & Record<string, unknown>,
) =>
  events.record(trx, {
    orgId: task.org_id,
    type: 'task.state_changed',
    stream: task.id,
    subjects: task.engagement_id
      ? { task_id: task.id, engagement_id: task.engagement_id }
      : { task_id: task.id },
    actor,
    data: change,
  })
