import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { AgentCredentials } from './agent-credentials.ts'
import { AgentDispatcher } from './dispatch.ts'
import { taskRoutes } from './routes.ts'
import { startTaskRunner, type TaskDeps, taskDetail, type TaskView } from './service.ts'
import * as store from './store.ts'

export interface TaskService {
  /** What the A2A surface passes to createTask, taskDetail and cancelTask (its code calls them directly). */
  readonly deps: TaskDeps
  detail(subject: string, id: string): Promise<TaskView>
  /** The completed ones among these tasks, with their receipt. */
  completed(ids: string[]): ReturnType<typeof store.completedTasks>
  /** The task's state (in `trx`, as the caller's transaction sees it), or undefined. */
  stateOf(id: string, trx?: RentalDb): Promise<store.TaskRow['state'] | undefined>
  /** The client's tasks with the agent, oldest first. */
  tasksWith(subject: string, agentDid: string): ReturnType<typeof store.tasksWith>
  /** Counts and first/last activity with the agent, for one client or all. */
  stats(agentDid: string, subject?: string): ReturnType<typeof store.taskStats>
  /** Fails the client's unfinished tasks with the agent, in `trx`; answers their ids. */
  stopWith(trx: RentalDb, subject: string, agentDid: string, reason: string, at: Date): Promise<string[]>
}

/**
 * Tasks: created under an active engagement with the escrow that pays for them, run on the
 * agent over A2A (sync within a timeout, else by a durable job with retries), completed with a
 * `task.completed` receipt in the same transaction, outputs kept for RENTAL_OUTPUT_TTL_S.
 * Table: tasks.
 */
export const tasksArea = defineArea({
  name: 'tasks',
  needs: ['auth', 'engagements', 'catalogue', 'outbox'],
  async mount(app, ctx, use): Promise<TaskService> {
    // the agents authenticate the rental with an idp access token for their URL (client credentials)
    const credentials = new AgentCredentials({
      link: use.auth.link,
      idpClient: ctx.config.idpClient,
      resource: ctx.topology.agents.url,
    })
    const { auth: _auth, ...services } = use
    const deps: TaskDeps = { ...ctx, ...services, dispatcher: new AgentDispatcher(credentials) }
    const runner = await startTaskRunner(deps)
    app.addHook('onClose', async () => runner.stop())
    return {
      deps,
      detail: (subject, id) => taskDetail(deps, subject, id),
      completed: (ids) => store.completedTasks(ctx.db, ids),
      stateOf: async (id, trx) => (await store.taskById(trx ?? ctx.db, id))?.state,
      tasksWith: (subject, did) => store.tasksWith(ctx.db, subject, did),
      stats: (did, subject) => store.taskStats(ctx.db, did, subject),
      stopWith: store.stopTasksWith,
    }
  },
  routes(app, _ctx, _use, own) {
    taskRoutes(app, own.deps)
  },
})
