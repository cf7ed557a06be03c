import { defineArea } from '../../context.ts'
import { readRoutes } from './routes.ts'

/** Search over the log's leaves (the search area's one query). */
export { searchLeaves } from './store.ts'

/**
 * The log's public read side: checkpoints (with cosignatures), tiles, entries, inclusion and
 * consistency proofs, offline bundles. It writes nothing; its store reads the log's tables.
 */
export const readArea = defineArea({
  name: 'read',
  mount: () => undefined,
  routes(app, ctx) {
    readRoutes(app, ctx.db, ctx.keys.verifierKey)
  },
})
