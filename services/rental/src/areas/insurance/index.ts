import { defineArea } from '../../context.ts'
import { insuranceRoutes } from './routes.ts'

/**
 * Insurance on engagements: a policy (coverage, premium charged on the rail when it starts, the
 * events it covers, a period; one active per engagement) and claims checked against its terms and
 * the evidence on record, paid up to the remaining coverage once per covered event, or refused
 * with the reason. Tables: insurance_policies, insurance_claims.
 */
export const insuranceArea = defineArea({
  name: 'insurance',
  needs: ['engagements', 'events', 'tasks'],
  mount: () => undefined,
  routes(app, ctx, use) {
    insuranceRoutes(app, ctx, { ctx, ...use })
  },
})
