import type { App } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { actorOfRequest, type EventService } from '../events/index.ts'
import type { MarketService } from '../market/index.ts'
import { CapacityChange, CapacityView, capacityDetail, changeCapacity } from './capacity.ts'
import { orgOf, Params, route } from '../../http/index.ts'

export function engagementCapacityRoutes(
  app: App,
  ctx: RentalContext,
  events: EventService,
  market: Pick<MarketService, 'listingConcurrencyOf'>,
) {
  const tags = ['engagements']
  app.get(
    '/api/engagements/:id/capacity',
    {
      ...route.session('engagements:read'),
      schema: {
        summary: 'The engagement’s capacity: maximum concurrent tasks and tasks per minute',
        tags,
        params: Params,
        response: { 200: CapacityView },
      },
    },
    async (request) => capacityDetail(ctx, market, orgOf(request), request.params.id),
  )
  app.post(
    '/api/engagements/:id/capacity',
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary: 'Sets the engagement’s capacity (the fields given; null lifts a limit)',
        description:
          'Task creation over a limit (console, A2A, schedules, batches, retries) answers 429 `capacity_exceeded` with Retry-After.',
        tags,
        params: Params,
        body: CapacityChange,
        response: { 200: CapacityView },
      },
    },
    async (request) =>
      changeCapacity(
        ctx,
        { orgId: orgOf(request), events, actor: actorOfRequest(request), market },
        request.params.id,
        request.body,
      ),
  )
}
