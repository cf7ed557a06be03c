import { defineArea } from '../../context.ts'
import { tasksService } from './service.ts'
import { taskRoutes } from './routes.ts'

export { ceilingText, taskSection } from './pages.ts'
export { createTask, parseTask, spendTask, TASK_PARAMETERS, type TaskClaim, taskClaim } from './service.ts'

/** What other areas ask of task grants: one by id, and an account's (its export). */
export type TasksService = typeof tasksService

/** The task grants' reads other areas share. */
export { liveTasksOf } from './store.ts'

/** Task grants: a user's bounded, purpose-bound delegation to an agent. */
export const tasksArea = defineArea({
  name: 'tasks',
  mount: (): TasksService => tasksService,
  routes(app, ctx) {
    taskRoutes(app, { db: ctx.db, origin: ctx.origin })
  },
})
