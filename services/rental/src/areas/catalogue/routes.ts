import { type App, LangQuery, moneyLocaleOf } from '@svc/kit'
import { type Static, Type } from 'typebox'
import { DeclaredModel } from '../models/index.ts'
import type { CatalogueService } from './index.ts'
import { route } from '../../http/index.ts'

/** The provider organization that publishes an agent (the built-in agents: the platform's, org_platform). */
export const Provider = Type.Object({ id: Type.String(), name: Type.String() })

export const Job = Type.Object({
  id: Type.String(),
  title: Type.String(),
  profile: Type.String(),
  outcome: Type.String(),
  description: Type.String(),
  price_fils: Type.Integer({ description: 'the price in AED fils (1 AED = 100 fils)' }),
  currency: Type.Literal('AED'),
  agents: Type.Array(
    Type.Object({
      id: Type.String(),
      did: Type.String(),
      name: Type.String(),
      description: Type.String(),
      card_url: Type.String(),
      skills: Type.Array(Type.Unknown()),
      provider: Provider,
      models: Type.Array(DeclaredModel, {
        description: 'the models the agent’s operator declared at the idp (its registry profile)',
      }),
    }),
  ),
})

export function catalogueRoutes(app: App, catalogue: CatalogueService) {
  app.get(
    '/api/jobs',
    {
      ...route.session('org:read'),
      schema: {
        summary:
          'The catalogue: jobs pairing a profile with an outcome, their price and serving agents (with their declared models)',
        description:
          'Titles, outcomes, descriptions and agents’ names in `lang`, else the member’s language, else Accept-Language’s (English where a text has no Arabic).',
        tags: ['catalogue'],
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Type.Object({ jobs: Type.Array(Job) }) },
      },
    },
    async (request) => {
      const jobs = await catalogue.catalogue(moneyLocaleOf(request))
      const models = await catalogue.modelsOf(jobs.flatMap((j) => j.agents.map((a) => a.did)))
      return {
        jobs: jobs.map((job) => ({
          ...job,
          agents: job.agents.map((a) => ({ ...a, models: models.get(a.did) ?? [] })),
        })) as Array<Static<typeof Job>>,
      }
    },
  )
}
