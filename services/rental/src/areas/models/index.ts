import { defineArea } from '../../context.ts'
import { modelRoutes } from './routes.ts'
import { Declarations, listModels, type ModelDeps } from './service.ts'

export interface ModelService {
  /** The models the listed agents declare (what `GET /api/models` answers). */
  list(query: Parameters<typeof listModels>[2]): ReturnType<typeof listModels>
}

/**
 * Models: what the listed agents' operators declare at the idp (its registry's agent profiles,
 * `declared_by: operator`), read over HTTP and kept a minute. No table.
 */
export const modelsArea = defineArea({
  name: 'models',
  needs: ['market'],
  mount(_app, ctx, use): ModelService {
    const deps: ModelDeps = { ...ctx, market: use.market }
    const declarations = new Declarations(ctx.topology.idp.url)
    state.set(ctx, { deps, declarations })
    return { list: (query) => listModels(deps, declarations, query) }
  },
  routes(app, ctx) {
    const { deps, declarations } = state.get(ctx)!
    modelRoutes(app, deps, declarations)
  },
})

const state = new WeakMap<object, { deps: ModelDeps; declarations: Declarations }>()
