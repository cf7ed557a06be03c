import { defineArea } from '../../context.ts'
import { evidenceRoutes } from './routes.ts'

/** Printable evidence of a user's consents and approvals. */
export const evidenceArea = defineArea({
  name: 'evidence',
  needs: ['activity'],
  mount: () => undefined,
  routes(app, ctx, { activity }) {
    evidenceRoutes(app, { db: ctx.db, origin: ctx.origin, activity })
  },
})
