import { type App, LangQuery as langQuery, Money, moneyLocaleOf } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { idempotent, orgOf, route } from '../../http/index.ts'
import { MAX_TOP_UP_FILS, topUp, walletView } from './service.ts'

const LangQuery = langQuery({ additionalProperties: false })

export function walletRoutes(app: App, ctx: RentalContext) {
  const tags = ['wallet']
  app.get(
    '/api/wallet',
    {
      ...route.session('money:read'),
      schema: {
        summary:
          'The wallet’s balance and how it is funded here (demo money, or none until a provider is configured)',
        tags,
        querystring: LangQuery,
        response: {
          200: Type.Object({
            balance: Money,
            funding: Type.Object({
              mode: Type.Union([Type.Literal('demo'), Type.Literal('none')]),
              max_top_up: Type.Union([Money, Type.Null()]),
            }),
          }),
        },
      },
    },
    async (request) => walletView(ctx, orgOf(request), moneyLocaleOf(request)),
  )
  app.post(
    '/api/wallet/top-ups',
    {
      ...route.csrf('releases:write'),
      ...idempotent(ctx.db, 'wallet-top-up'),
      schema: {
        summary: `Adds demo money to the wallet (development and tests only; at most ${MAX_TOP_UP_FILS} fils a top-up)`,
        description:
          'A wallet_funding transfer from external:funding, the one account money may enter by, with a wallet.funded receipt. The Idempotency-Key is required: the same key answers the first top-up. 409 funding_unavailable where no funding is configured (production without a provider).',
        tags,
        querystring: LangQuery,
        headers: Type.Object({ 'idempotency-key': Type.String({ minLength: 1, maxLength: 200 }) }),
        body: Type.Object(
          { amount_fils: Type.Integer({ minimum: 1, maximum: MAX_TOP_UP_FILS }) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            id: Type.String({ description: 'the rail transfer' }),
            amount: Money,
            demo: Type.Literal(true),
            receipt: Type.Object({ id: Type.String(), leaf_hash: Type.String() }),
            balance: Money,
            created_at: Type.String(),
          }),
        },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(
          await topUp(
            ctx,
            orgOf(request),
            request.headers['idempotency-key'],
            request.body.amount_fils,
            moneyLocaleOf(request),
          ),
        ),
  )
}
