import { type App, IdempotencyKeyHeader, LangQuery, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, type EventService } from '../events/index.ts'
import type { BudgetService } from '../budgets/index.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { MarketService } from '../market/index.ts'
import type { OnboardingService } from '../onboarding/index.ts'
import { detailNames, withNames } from './names.ts'
import { engagementDetail, engagementList, hire, sign } from './service.ts'
import {
  Body,
  clientOf,
  Did,
  Escrow,
  Hash,
  Id,
  idempotent,
  Nullable,
  orgOf,
  Params,
  route,
  Signature,
} from '../../http/index.ts'

const Signed = Type.Object({ body: Body, hash: Type.String() })
const EngagementSummary = Type.Object({
  id: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('active'), Type.Literal('ended')]),
  job_id: Type.String(),
  agent_did: Type.String(),
  client_did: Type.String(),
  provider_did: Type.String(),
  price_fils: Type.Integer(),
  currency: Type.String(),
  created_at: Type.String(),
  activated_at: Nullable(Type.String()),
  job_title: Nullable(
    Type.String({ description: 'the job’s title in the reader’s language (lang / Accept-Language)' }),
  ),
  agent_name: Nullable(
    Type.String({
      description: 'the agent’s display name in the reader’s language; null outside the catalogue',
    }),
  ),
  sla: Type.Object({ body: Body, hash: Type.String(), signed: Type.Boolean() }),
})
const EngagementWithPackage = Type.Object({
  engagement: Type.Object({
    ...EngagementSummary.properties,
    provider_name: Nullable(Type.String({ description: 'the organization that publishes the agent' })),
    escrows: Type.Array(Escrow),
  }),
  package: Type.Object({ sla: Signed, escrows: Type.Array(Signed) }),
})

export function engagementRoutes(
  app: App,
  ctx: RentalContext,
  catalogue: CatalogueService,
  events: EventService,
  budgets: BudgetService,
  market: Pick<MarketService, 'assertHireable' | 'refreshCard'>,
  onboarding: Pick<OnboardingService, 'assertMayHire'>,
) {
  const tags = ['engagements']
  app.post(
    '/api/engagements',
    {
      ...route.csrf('engagements:write'),
      ...idempotent(ctx.db, 'hire'),
      schema: {
        summary: 'Hires an agent for a job: a pending engagement and the offer package to sign',
        description:
          'Idempotent with an Idempotency-Key: a resend answers the first answer and makes no second engagement; the key with another body is 422.',
        tags,
        headers: IdempotencyKeyHeader,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object(
          { job_id: Id, agent_did: Did, client_did: Type.Optional(Did) },
          { additionalProperties: false },
        ),
        response: { 200: EngagementWithPackage },
      },
    },
    async (request) => {
      // an external agent's card is fetched again past its TTL (a change is flagged on the listing)
      await market.refreshCard(request.body.agent_did)
      const hired = await hire(
        ctx,
        catalogue,
        { client: clientOf(request), events, budgets, market, onboarding, actor: actorOfRequest(request) },
        request.body,
      )
      return detailNames(catalogue, hired, moneyLocaleOf(request, request.query.lang))
    },
  )
  app.get(
    '/api/engagements',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'The signed-in client’s engagements, newest first',
        tags,
        querystring: Type.Object({ ...pageQuery().properties, ...LangQuery().properties }),
        response: { 200: Type.Object({ engagements: Type.Array(EngagementSummary) }) },
      },
    },
    async (request) => {
      const { engagements } = await engagementList(ctx.db, orgOf(request), pageOf(request.query))
      return {
        engagements: await withNames(catalogue, engagements, moneyLocaleOf(request, request.query.lang)),
      }
    },
  )
  app.get(
    '/api/engagements/:id',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'An engagement with its SLA, offer package and escrow states',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: EngagementWithPackage },
      },
    },
    async (request) =>
      detailNames(
        catalogue,
        await engagementDetail(ctx.db, orgOf(request), request.params.id),
        moneyLocaleOf(request, request.query.lang),
      ),
  )
  app.post(
    '/api/engagements/:id/signatures',
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary:
          'The client’s signatures: the SLA (activates the engagement) and escrows (opens them on the rail); a forged one refuses the whole request',
        tags,
        params: Params,
        querystring: LangQuery({ additionalProperties: false }),
        body: Type.Object(
          {
            sla_signature: Type.Optional(Signature),
            escrow_signatures: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    escrow_hash: Type.Optional(Hash),
                    escrow_id: Type.Optional(Id),
                    signature: Signature,
                  },
                  { additionalProperties: false },
                ),
                { maxItems: 50 },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: EngagementWithPackage },
      },
    },
    async (request) =>
      detailNames(
        catalogue,
        await sign(
          ctx,
          { orgId: orgOf(request), events, actor: actorOfRequest(request) },
          request.params.id,
          request.body,
        ),
        moneyLocaleOf(request, request.query.lang),
      ),
  )
}
