import { type App, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { CSRF_SECURITY, SESSION_SECURITY, sessionOf } from '../auth/hooks.ts'
import { Nullable } from '../engagements/schemas.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import { can, orgOf } from '../orgs/permissions.ts'
import {
  changeAvailability,
  listingDetail,
  listingSearch,
  MAX_FILS,
  type MarketDeps,
  type Publisher,
  publishListing,
} from './service.ts'

const Money = Type.Object({
  amount_fils: Type.Integer(),
  currency: Type.String(),
  display: Type.String({ description: 'formatted for a person, in the request’s language' }),
})
const State = Type.Union([Type.Literal('available'), Type.Literal('limited'), Type.Literal('unavailable')])

const Listing = Type.Object({
  id: Type.String(),
  provider_org_id: Type.String({
    description: 'the provider organization (org_platform: the built-in agents)',
  }),
  agent_did: Type.String(),
  title: Type.String(),
  description: Type.String(),
  skills: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  languages: Type.Array(Type.String()),
  price: Money,
  package_price: Nullable(Money),
  sla: Type.Record(Type.String(), Type.Unknown()),
  availability: Type.Object({
    state: State,
    max_concurrency: Nullable(Type.Integer()),
    until: Nullable(Type.String()),
  }),
  created_at: Type.String(),
  updated_at: Type.String(),
})

const Fils = (description: string) => Type.Integer({ minimum: 1, maximum: MAX_FILS, description })
const Words = (max: number) => Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: max })
const ListingId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
const LangProp = { lang: Type.Optional(Type.Union([Type.Literal('en'), Type.Literal('ar')])) }
const Lang = Type.Object(LangProp)

const localeOf = moneyLocaleOf

export function marketRoutes(app: App, deps: MarketDeps, orgs: Pick<OrgService, 'isOperator'>) {
  const { sessions } = deps
  const tags = ['market']
  const publisher = (request: FastifyRequest): Publisher => ({
    orgId: orgOf(request),
    operator: orgs.isOperator(sessionOf(request)),
  })
  /** An operator acting for the platform is recorded as an operator. */
  const actorOf = (request: FastifyRequest, who: Publisher) =>
    who.operator ? operatorActor(request) : actorOfRequest(request)

  app.post(
    '/api/market/listings',
    {
      ...sessions.sessionAndCsrf,
      ...can('market:write'),
      schema: {
        summary:
          'Publishes a listing of one of the organization’s agents (again for the same agent: updates it)',
        description:
          'The organization must provide the agent (403 otherwise); operators publish for the platform’s built-in agents (org_platform).',
        tags,
        security: CSRF_SECURITY,
        querystring: Lang,
        body: Type.Object(
          {
            agent_did: Type.String({ minLength: 1, maxLength: 200 }),
            title: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.String({ minLength: 1, maxLength: 5000 }),
            skills: Type.Optional(Words(50)),
            tags: Type.Optional(Words(20)),
            languages: Type.Optional(
              Type.Array(Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$' }), { maxItems: 20 }),
            ),
            price_fils: Fils('price per task, positive, at most 2^53-1'),
            package_price_fils: Type.Optional(Fils('price per package')),
            sla: Type.Optional(
              Type.Record(
                Type.String({ maxLength: 100 }),
                Type.Union([Type.String({ maxLength: 500 }), Type.Number(), Type.Boolean()]),
                {
                  maxProperties: 20,
                  description: 'the SLA terms offered (for example response_seconds, uptime)',
                },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Listing },
      },
    },
    async (request) => {
      const who = publisher(request)
      return publishListing(deps, who, request.body, actorOf(request, who), localeOf(request))
    },
  )
  app.get(
    '/api/market/listings',
    {
      ...sessions.session,
      ...can('market:read'),
      schema: {
        summary: 'Searches the published listings, ranked',
        description:
          '`q`: full-text search over title, skills and description (websearch syntax; a title match ranks above a description match).',
        tags,
        security: SESSION_SECURITY,
        querystring: Type.Object(
          {
            ...pageQuery().properties,
            ...LangProp,
            q: Type.Optional(Type.String({ maxLength: 200 })),
            tag: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            language: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
            min_price: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_FILS })),
            max_price: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_FILS })),
            availability: Type.Optional(State),
            sort: Type.Optional(
              Type.Union([Type.Literal('relevance'), Type.Literal('price'), Type.Literal('newest')]),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            listings: Type.Array(Type.Object({ ...Listing.properties, rank: Type.Number() })),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query
      const page = pageOf(q)
      return listingSearch(
        deps,
        {
          q: q.q,
          tag: q.tag?.toLowerCase(),
          language: q.language?.toLowerCase(),
          minPrice: q.min_price,
          maxPrice: q.max_price,
          availability: q.availability,
          sort: q.sort ?? 'relevance',
          limit: page.limit,
          offset: page.offset,
        },
        localeOf(request),
      )
    },
  )
  app.get(
    '/api/market/listings/:id',
    {
      ...sessions.session,
      ...can('market:read'),
      schema: {
        summary: 'A published listing',
        tags,
        security: SESSION_SECURITY,
        params: ListingId,
        querystring: Lang,
        response: { 200: Listing },
      },
    },
    async (request) => listingDetail(deps, request.params.id, localeOf(request)),
  )
  app.post(
    '/api/market/listings/:id/availability',
    {
      ...sessions.sessionAndCsrf,
      ...can('market:write'),
      schema: {
        summary:
          'Sets a listing’s availability: available, limited (a concurrency cap) or unavailable (until a time, or until changed)',
        description:
          'Hiring the agent of an unavailable listing is 409 `listing_unavailable`. Another organization’s listing: 404.',
        tags,
        security: CSRF_SECURITY,
        params: ListingId,
        querystring: Lang,
        body: Type.Union([
          Type.Object({ state: Type.Literal('available') }, { additionalProperties: false }),
          Type.Object(
            {
              state: Type.Literal('limited'),
              max_concurrency: Type.Integer({ minimum: 1, maximum: 10_000 }),
            },
            { additionalProperties: false },
          ),
          Type.Object(
            {
              state: Type.Literal('unavailable'),
              until: Type.Optional(Type.String({ format: 'date-time' })),
            },
            { additionalProperties: false },
          ),
        ]),
        response: { 200: Listing },
      },
    },
    async (request) => {
      const who = publisher(request)
      return changeAvailability(
        deps,
        who,
        request.params.id,
        request.body,
        actorOf(request, who),
        localeOf(request),
      )
    },
  )
}
