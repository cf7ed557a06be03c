import { defineArea } from '../../context.ts'
import { parRoutes } from './routes.ts'

/** Pushed authorization requests (RFC 9126). */
export const parArea = defineArea({
  name: 'par',
  mount(app, ctx) {
    parRoutes(app, { db: ctx.db, kv: ctx.kv, issuer: ctx.issuer, dpop: ctx.dpop })
    return undefined
  },
})
