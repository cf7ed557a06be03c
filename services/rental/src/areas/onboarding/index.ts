import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { IdpOrganization } from './idp-org.ts'
import { onboardingRoutes } from './routes.ts'
import { assertKyb, type OnboardingDeps, onboardingStatus } from './service.ts'

export interface OnboardingService {
  /** What the onboarding routes work with. */
  readonly deps: OnboardingDeps
  /** 403 `kyb_required` when checks are required (RENTAL_KYB_REQUIRED) and the organization has no approved one. */
  assertMayPublish(orgId: string, db?: RentalDb): Promise<void>
  /** As assertMayPublish, for a hire whose package costs more than RENTAL_KYB_HIRE_LIMIT_FILS. */
  assertMayHire(orgId: string, priceFils: number, db?: RentalDb): Promise<void>
  /** The organization's onboarding as GET /api/onboarding answers it (GET /v1/org's onboarding state). */
  status(orgId: string): ReturnType<typeof onboardingStatus>
}

/**
 * Onboarding: an organization's business check (KYB) and agent screenings (KYA), both done by
 * the idp's organization API under the rental's own idp organization; an operator reviews the
 * business check; the gates of listings and large hires. Tables: idp_org_keys, rental_kyb, rental_kya.
 */
export const onboardingArea = defineArea({
  name: 'onboarding',
  needs: ['events', 'orgs'],
  mount(_app, ctx, use): OnboardingService {
    const { onboarding } = ctx.config
    const deps: OnboardingDeps = {
      ctx,
      events: use.events,
      idp: new IdpOrganization({
        db: ctx.db,
        sealer: ctx.sealer,
        issuer: ctx.topology.idp.url,
        configuredKey: onboarding.idpOrgKey,
        mayEnrol: onboarding.mayEnrol,
      }),
    }
    if (!onboarding.mayEnrol && !onboarding.idpOrgKey)
      ctx.log.warn('RENTAL_IDP_ORG_KEY is not set: business checks and agent screenings answer 503')
    return {
      deps,
      status: (orgId) => onboardingStatus(deps, orgId),
      assertMayPublish: (orgId, db) => assertKyb(deps, db ?? ctx.db, orgId, 'publishing a listing'),
      async assertMayHire(orgId, priceFils, db) {
        if (priceFils <= onboarding.hireLimitFils) return
        await assertKyb(deps, db ?? ctx.db, orgId, `a hire above ${onboarding.hireLimitFils} fils`)
      },
    }
  },
  routes(app, ctx, use, own) {
    onboardingRoutes(app, { ...own.deps, orgs: use.orgs })
  },
})
