import { defineArea } from '../../context.ts'
import { a2aRoutes } from './routes.ts'

export { InvalidParams, mapRentalError, PermissionDenied } from './caller.ts'

/** The rental as an A2A agent: its card and the JSON-RPC endpoint for a client's own software (agt_ tokens). No tables. */
export const a2aArea = defineArea({
  name: 'a2a',
  needs: ['tasks', 'tokens'],
  mount: () => undefined,
  routes(app, _ctx, use) {
    a2aRoutes(app, { ...use.tasks.deps, verifyToken: use.tokens.verify })
  },
})
