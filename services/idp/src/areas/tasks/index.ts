import { defineArea } from '../../context.ts'
import { taskRoutes } from './routes.ts'

export { ceilingText, taskSection } from './pages.ts'
export {
  createTask,
  parseTask,
  spendTask,
  TASK_PARAMETERS,
  type TaskClaim,
  taskClaim,
  tasksService,
} from './service.ts'

/** The task grants' reads other areas share. */
export { liveTasksOf } from './store.ts'

/** Task grants: a user's bounded, purpose-bound delegation to an agent. */
export const tasksArea = defineArea({
  name: 'tasks',
  mount(app, ctx) {
    taskRoutes(app, { db: ctx.db, origin: ctx.origin })
    return undefined
  },
})
