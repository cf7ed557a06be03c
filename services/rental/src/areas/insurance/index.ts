import { defineArea } from '../../context.ts'
import { insuranceRoutes } from './routes.ts'

/**
 * Insurance on engagements, priced by the platform (docs/money.md): a quote (coverage up to the
 * money at risk, a premium from the agent's measured rates, declined when the funds cannot back
 * it), bought as it is into a policy (premium wallet → the pool; one active per engagement), and
 * claims checked against the record, paid at most the loss proven once per event, never for what
 * the client caused, from the pool and then the platform's reserve (funded from fees by an
 * operator). Tables: insurance_quotes, insurance_policies, insurance_claims.
 */
export const insuranceArea = defineArea({
  name: 'insurance',
  needs: ['engagements', 'events', 'tasks', 'sla', 'catalogue', 'orgs'],
  mount: () => undefined,
  routes(app, ctx, use) {
    insuranceRoutes(app, ctx, { ctx, ...use })
  },
})
