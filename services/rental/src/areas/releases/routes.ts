import { type App, IdempotencyKeyHeader } from '@svc/kit'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest } from '../events/index.ts'
import { pendingReleases, type ReleaseDeps, release } from './service.ts'
import { Body, Escrow, Hash, Nullable, orgOf, Params, route, Signature } from '../../http/index.ts'

/** Pending releases and the release itself: an open escrow paid out once, on the client's signed instruction. */
export function releaseRoutes(app: App, ctx: RentalContext, deps: ReleaseDeps) {
  const tags = ['engagements']
  app.get(
    '/api/engagements/:id/releases/pending',
    {
      ...route.session('money:read'),
      schema: {
        summary: 'Escrows still to sign, and release requests (completed tasks) with the body to sign',
        tags,
        params: Params,
        response: {
          200: Type.Object({
            escrows_to_sign: Type.Array(Escrow),
            releases: Type.Array(
              Type.Object({
                escrow: Escrow,
                task: Type.Object({
                  id: Type.String(),
                  state: Type.String(),
                  completed_at: Nullable(Type.String()),
                  receipt: Type.Object({
                    id: Nullable(Type.String()),
                    leaf_hash: Nullable(Type.String()),
                    ledger_index: Nullable(Type.Integer()),
                  }),
                }),
                instruction: Body,
              }),
            ),
          }),
        },
      },
    },
    async (request) => pendingReleases(deps, orgOf(request), request.params.id),
  )
  app.post(
    '/api/engagements/:id/releases',
    {
      // a release above RENTAL_STEP_UP_RELEASE_FILS needs a recent second factor
      ...route.stepUp('releases:write', async (request) => {
        const { params, body } = request as unknown as {
          params: { id: string }
          body: { escrow_hash: string }
        }
        const engagement = await deps.engagements.engagementOf(orgOf(request), params.id)
        const escrow = engagement && (await deps.engagements.escrowByHash(engagement.id, body.escrow_hash))
        return escrow !== undefined && Number(escrow.amount_fils) > ctx.config.stepUp.releaseFils
      }),
      schema: {
        summary: 'Pays an open escrow out once, on the client’s signed release instruction',
        tags,
        params: Params,
        headers: IdempotencyKeyHeader,
        body: Type.Object(
          {
            escrow_hash: Hash,
            instruction: Type.Object(
              {
                body: Type.Record(Type.String(), Type.Unknown(), { maxProperties: 20 }),
                signature: Signature,
              },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            escrow: Escrow,
            transfer: Type.Object({
              id: Type.String(),
              postings: Type.Array(Type.Object({ account: Type.String(), amount: Type.Integer() })),
            }),
            receipt: Type.Object({ id: Type.String(), leaf_hash: Type.String() }),
          }),
        },
      },
    },
    async (request) =>
      release(
        deps,
        orgOf(request),
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
        actorOfRequest(request),
      ),
  )
}
