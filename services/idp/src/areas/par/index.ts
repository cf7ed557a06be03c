import { defineArea } from '../../context.ts'
import { parRoutes } from './routes.ts'

export { expandPushed, parService } from './service.ts'

/** Pushed authorization requests (RFC 9126). */
export const parArea = defineArea({
  name: 'par',
  needs: ['authorize'],
  mount(app, ctx, { authorize }) {
    parRoutes(app, { db: ctx.db, kv: ctx.kv, issuer: ctx.issuer, dpop: ctx.dpop, authorize })
    return undefined
  },
})
