import { Type } from 'typebox'
import { defineArea } from '../../context.ts'
import { modelRoutes } from './routes.ts'
import { Declarations, listModels, type ModelDeps, type ModelsOf } from './service.ts'

export type { ModelsOf } from './service.ts'

/** A model an agent's operator declared at the idp (a claim of the operator, not checked). */
export const DeclaredModel = Type.Object({
  id: Type.String(),
  version: Type.Union([Type.String(), Type.Null()]),
  provider: Type.Union([Type.String(), Type.Null()]),
  declared_by: Type.Literal('operator'),
})

export interface ModelService {
  /** The models the listed agents declare (what `GET /api/models` answers). */
  list(query: Parameters<typeof listModels>[2]): ReturnType<typeof listModels>
  /** Each agent's declared models, by DID, from the same cache. */
  modelsOf: ModelsOf
}

/**
 * Models: what the listed agents' operators declare at the idp (its registry's agent profiles,
 * `declared_by: operator`), read over HTTP, kept a minute and then refreshed in the background.
 * The catalogue and the market show them through its `models.of` reaction (src/reactions.ts). No table.
 */
export const modelsArea = defineArea({
  name: 'models',
  needs: ['market', 'catalogue'],
  mount(_app, ctx, use): ModelService {
    const deps: ModelDeps = { ...ctx, market: use.market }
    const declarations = new Declarations(ctx.topology.idp.url)
    state.set(ctx, { deps, declarations })
    const modelsOf: ModelsOf = (dids) => declarations.modelsOf(dids)
    ctx.reactions.on('models.of', modelsOf)
    return { list: (query) => listModels(deps, declarations, query), modelsOf }
  },
  routes(app, ctx) {
    const { deps, declarations } = state.get(ctx)!
    modelRoutes(app, deps, declarations)
  },
})

const state = new WeakMap<object, { deps: ModelDeps; declarations: Declarations }>()
