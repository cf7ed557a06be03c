import { defineArea } from '../../context.ts'
import { taskRoutes } from './routes.ts'

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
