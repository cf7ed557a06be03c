import { defineArea } from '../../context.ts'
import { evidenceRoutes } from './routes.ts'

/** Printable evidence of a user's consents and approvals. */
export const evidenceArea = defineArea({
  name: 'evidence',
  mount(app, ctx) {
    evidenceRoutes(app, { db: ctx.db, origin: ctx.origin })
    return undefined
  },
})
