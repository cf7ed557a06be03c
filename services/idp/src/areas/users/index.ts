import { defineArea } from '../../context.ts'
import { userAdminRoutes } from './routes.ts'

/** The admin's view of users: disable and enable accounts. */
export const usersArea = defineArea({
  name: 'users',
  needs: ['signals', 'sessions', 'lifecycle', 'accounts', 'token'],
  mount(app, ctx, { signals, sessions, lifecycle, accounts, token }) {
    userAdminRoutes(app, {
      db: ctx.db,
      signals,
      sessions,
      lifecycle,
      accounts,
      tokens: token,
      adminToken: ctx.config.adminToken,
    })
    return undefined
  },
})
