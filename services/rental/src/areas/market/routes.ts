import { type App, DisplayedMoney, Fils, LangQuery, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DeclaredModel } from '../models/index.ts'
import { actorOfRequest, operatorActor } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import {
  changeAvailability,
  listingDetail,
  listingSearch,
  MAX_FILS,
  type MarketDeps,
  type Publisher,
  publishListing,
  withModels,
} from './service.ts'
import { publishExternal } from './external.ts'
import { Nullable, orgOf, route, sessionOf } from '../../http/index.ts'

const State = Type.Union([Type.Literal('available'), Type.Literal('limited'), Type.Literal('unavailable')])
const ListedState = Type.Union([...State.anyOf, Type.Literal('unpublished')])

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
  price: DisplayedMoney,
  package_price: Nullable(DisplayedMoney),
  sla: Type.Record(Type.String(), Type.Unknown()),
  availability: Type.Object({
    state: ListedState,
    max_concurrency: Nullable(Type.Integer()),
    until: Nullable(Type.String()),
  }),
  external: Nullable(
    Type.Object(
      {
        card_url: Type.String(),
        card_sha256: Type.String({
          description: 'SHA-256 (hex) of the card as listed: JCS bytes without signatures',
        }),
        card_changed: Type.Boolean({
          description: 'a later fetch found another card: hiring is 409 until republished',
        }),
        latest_card_sha256: Type.String(),
        signed_by_kid: Nullable(
          Type.String({ description: 'the kid of the verified JWS signature (null: unsigned)' }),
        ),
        fetched_at: Nullable(Type.String()),
      },
      { description: 'an external A2A agent’s card (null: a built-in agent)' },
    ),
  ),
  models: Type.Array(DeclaredModel, {
    description: 'the models the agent’s operator declared at the idp (its registry profile)',
  }),
  created_at: Type.String(),
  updated_at: Type.String(),
})

const Words = (max: number) => Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: max })
const ListingId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

const localeOf = moneyLocaleOf

/** A listing's terms, for a built-in agent and an external one alike. */
const Terms = {
  skills: Type.Optional(Words(50)),
  tags: Type.Optional(Words(20)),
  languages: Type.Optional(
    Type.Array(Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$' }), { maxItems: 20 }),
  ),
  price_fils: Fils({ maximum: MAX_FILS, description: 'price per task, positive, at most 2^53-1' }),
  package_price_fils: Type.Optional(Fils({ maximum: MAX_FILS, description: 'price per package' })),
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
}

export function marketRoutes(app: App, deps: MarketDeps, orgs: Pick<OrgService, 'isOperator'>) {
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
      ...route.csrf('market:write'),
      schema: {
        summary:
          'Publishes a listing of one of the organization’s agents (again for the same agent: updates it)',
        description:
          'The organization must provide the agent (403 otherwise); operators publish for the platform’s built-in agents (org_platform).',
        tags,
        querystring: LangQuery(),
        body: Type.Object(
          {
            agent_did: Type.String({ minLength: 1, maxLength: 200 }),
            title: Type.String({ minLength: 1, maxLength: 200 }),
            description: Type.String({ minLength: 1, maxLength: 5000 }),
            ...Terms,
          },
          { additionalProperties: false },
        ),
        response: { 200: Listing },
      },
    },
    async (request) => {
      const who = publisher(request)
      const [view] = await withModels(deps, [
        await publishListing(deps, who, request.body, actorOf(request, who), localeOf(request)),
      ])
      return view!
    },
  )
  app.post(
    '/api/market/listings/external',
    {
      ...route.csrf('market:write'),
      schema: {
        summary:
          'Publishes an external A2A agent named by URL (again for the same agent: updates it, re-reading its card)',
        description:
          'The rental fetches the A2A 1.0 agent card (`url` itself when it ends in /.well-known/agent-card.json, else that path under it; https and public addresses only outside development; 64 KiB, 5 s, 3 redirects), validates it, verifies its JWS signatures (key by `jku` and `kid`), and lists the agent with the card’s SHA-256; the agent is then hired and run as the built-in ones. The card must name the agent’s did:key (extension urn:svc:a2a:agent-result:v1) and a JSON-RPC 1.0 interface. A card that cannot be fetched, is not a valid card, or whose signature does not verify: 422.',
        tags,
        querystring: LangQuery(),
        body: Type.Object(
          {
            url: Type.String({
              minLength: 1,
              maxLength: 2000,
              pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s]+$',
              description: 'the agent’s URL, or its card’s',
            }),
            job_ids: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
              minItems: 1,
              maxItems: 20,
              description: 'the jobs of the catalogue the agent serves',
            }),
            title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            description: Type.Optional(Type.String({ minLength: 1, maxLength: 5000 })),
            ...Terms,
          },
          { additionalProperties: false },
        ),
        response: { 200: Listing },
      },
    },
    async (request) => {
      const who = publisher(request)
      const [view] = await withModels(deps, [
        await publishExternal(deps, who, request.body, actorOf(request, who), localeOf(request)),
      ])
      return view!
    },
  )
  app.get(
    '/api/market/listings',
    {
      ...route.session('market:read'),
      schema: {
        summary: 'Searches the published listings, ranked',
        description:
          '`q`: full-text search over title, skills and description (websearch syntax; a title match ranks above a description match).',
        tags,
        querystring: Type.Object(
          {
            ...pageQuery().properties,
            ...LangQuery().properties,
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
      const found = await listingSearch(
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
      return { ...found, listings: await withModels(deps, found.listings) }
    },
  )
  app.get(
    '/api/market/listings/:id',
    {
      ...route.session('market:read'),
      schema: {
        summary: 'A published listing',
        tags,
        params: ListingId,
        querystring: LangQuery(),
        response: { 200: Listing },
      },
    },
    async (request) =>
      (
        await withModels(deps, [
          await listingDetail(deps, request.params.id, localeOf(request), publisher(request)),
        ])
      )[0]!,
  )
  app.post(
    '/api/market/listings/:id/availability',
    {
      ...route.csrf('market:write'),
      schema: {
        summary:
          'Sets a listing’s availability: available, limited (a concurrency cap), unavailable (until a time, or until changed) or unpublished (off the market)',
        description:
          'Hiring the agent of an unavailable or unpublished listing is 409 `listing_unavailable`; a limited listing’s agent takes a new task only while fewer than `max_concurrency` of its tasks run (429 `listing_at_capacity`). Unpublished: left out of search and /market, read only by its organization; publishing it again (or setting another state) puts it back. Another organization’s listing: 404.',
        tags,
        params: ListingId,
        querystring: LangQuery(),
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
          Type.Object({ state: Type.Literal('unpublished') }, { additionalProperties: false }),
        ]),
        response: { 200: Listing },
      },
    },
    async (request) => {
      const who = publisher(request)
      const changed = await changeAvailability(
        deps,
        who,
        request.params.id,
        request.body,
        actorOf(request, who),
        localeOf(request),
      )
      return (await withModels(deps, [changed]))[0]!
    },
  )
}
