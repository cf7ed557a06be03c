import type { FastifyRequest } from 'fastify'
import { rentalError } from '../errors.ts'
import { sessionOf } from './session.ts'

/**
 * What a route may need. Roles are rows of `rental_roles` (role → permissions), so a custom role
 * is a new row, not new code; these names are the vocabulary those rows use.
 */
export const PERMISSIONS = [
  'org:read',
  'members:write',
  'members:owners',
  'tokens:read',
  'tokens:write',
  'engagements:read',
  'engagements:write',
  'tasks:read',
  'tasks:write',
  'money:read',
  'releases:write',
  'record:read',
  'agents:revoke',
  'approvals:read',
  'approvals:write',
  'webhooks:read',
  'webhooks:write',
  'audit:read',
  'schedules:read',
  'schedules:write',
  'budgets:write',
  'invoices:write',
  'refunds:write',
  'market:read',
  'market:write',
  'files:read',
  'files:write',
  'ratings:write',
  'incidents:read',
  'incidents:write',
  'disputes:write',
  'insurance:write',
  'versions:write',
  'clients:erase',
  'retention:read',
  'retention:write',
  'retention:hold',
  'onboarding:read',
  'onboarding:write',
  'connect:read',
  'connect:write',
  'keys:write',
  'secrets:read',
  'secrets:write',
  'roles:write',
  'connections:read',
  'profile:write',
  'teams:write',
  'exports:write',
] as const
export type Permission = (typeof PERMISSIONS)[number]

/** The signed-in client's place: its organization, role and that role's permissions. */
export interface Membership {
  memberId: string
  orgId: string
  role: string
  /** The member's chosen language (POST /api/locale); null: none chosen, Accept-Language decides. */
  locale: 'en' | 'ar' | null
  permissions: readonly string[]
}

declare module 'fastify' {
  interface FastifyRequest {
    membership: Membership | null
  }
  interface FastifyContextConfig {
    /** The permission the route needs, checked by the orgs area's `preValidation` hook. */
    permission?: Permission
  }
}

/** The membership of a request that passed the session check (set by the orgs area). */
export function membershipOf(request: FastifyRequest): Membership {
  if (!request.membership) throw rentalError('unauthenticated', 'sign in first: no live console session')
  return request.membership
}

/** The organization that owns what the request reads or changes. */
export const orgOf = (request: FastifyRequest) => membershipOf(request).orgId

export function refuse(permission: string) {
  return rentalError('forbidden', `your role does not have the ${permission} permission`)
}

/** Who acts for the organization: its id, and the signed-in client's DID (from the idp). */
export interface OrgClient {
  orgId: string
  clientDid: string | null
}

export const clientOf = (request: FastifyRequest): OrgClient => ({
  orgId: orgOf(request),
  clientDid: sessionOf(request).clientDid,
})
