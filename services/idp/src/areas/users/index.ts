import { defineArea } from '../../context.ts'
import { userAdminRoutes } from './routes.ts'

/** The admin's view of users: disable and enable accounts. */
export const usersArea = defineArea({
  name: 'users',
  needs: ['signals'],
  mount(app, ctx, { signals }) {
    userAdminRoutes(app, { db: ctx.db, signals, adminToken: ctx.config.adminToken })
    return undefined
  },
})
