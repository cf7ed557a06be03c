import { type App, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import { type Declarations, listModels, type ModelDeps } from './service.ts'
import { Nullable, route } from '../../http/index.ts'

const Model = Type.Object({
  agent_did: Type.String(),
  listing_id: Type.String(),
  listing_title: Type.String(),
  external: Type.Boolean({ description: 'the listing is an external A2A agent’s' }),
  model: Type.String(),
  version: Nullable(Type.String()),
  provider: Nullable(Type.String()),
  declared_by: Type.Literal('operator'),
  source: Type.Literal('idp_registry'),
})

export function modelRoutes(app: App, deps: ModelDeps, declarations: Declarations) {
  app.get(
    '/api/models',
    {
      ...route.session('market:read'),
      schema: {
        summary: 'The models the listed agents declare (their operators’ declarations at the idp), paged',
        description:
          'One entry per published listing whose agent’s operator declared a model at the idp (its registry profile’s `agent`, `declared_by: operator`); `provider` filters (case-insensitive). A declaration is a claim of the operator, not checked.',
        tags: ['models'],
        querystring: Type.Object(
          {
            ...pageQuery().properties,
            provider: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            models: Type.Array(Model),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) =>
      listModels(deps, declarations, { ...pageOf(request.query), provider: request.query.provider }),
  )
}
