import type { FastifyRequest } from 'fastify'
import { rentalError } from '../../errors.ts'
import type { ConsoleSessions } from '../auth/hooks.ts'
import { tokenActor } from '../events/index.ts'
import type { TokenService } from '../tokens/index.ts'
import type { VerifiedApiToken } from '../tokens/service.ts'
import {
  type Permission,
  publishSecurity,
  TENANT_READ_SECURITY,
  TENANT_WRITE_SECURITY,
} from '../../http/index.ts'

/** The role name a key's membership carries (it is no member's role). */
export const KEY_ROLE = 'organization-key'

declare module 'fastify' {
  interface FastifyRequest {
    /** The organization key a /v1 call was made with, or null (a console session). */
    orgKey: VerifiedApiToken | null
  }
}

const ORG_KEY_BEARER = /^bearer\s+ork_/i

/**
 * The `onRequest` hook of /v1 routes: an `Authorization: Bearer ork_…` organization key (401 when
 * unknown, revoked or expired; 403 naming the scope the route needs when the key lacks it), else the
 * console session (and its CSRF token on writes), whose role the orgs area checks next. A key's
 * calls act as the organization (its membership: the key's scopes as permissions), recorded with
 * the key as their actor.
 */
export function tenantAuth(tokens: TokenService, sessions: ConsoleSessions) {
  const hook = (write: boolean) => async (request: FastifyRequest) => {
    const header = request.headers.authorization
    if (typeof header === 'string' && ORG_KEY_BEARER.test(header.trim())) {
      const key = await tokens.verifyOrgKey(header.length > 200 ? undefined : header)
      if (!key) throw rentalError('unauthenticated', 'the organization key is unknown, revoked or expired')
      const needed = request.routeOptions.config?.permission
      if (needed && !key.scopes.includes(needed))
        throw rentalError('forbidden', `this organization key lacks the ${needed} scope`)
      request.orgKey = key
      request.membership = {
        memberId: key.createdBy ?? key.id,
        orgId: key.owner,
        role: KEY_ROLE,
        locale: null,
        permissions: key.scopes,
      }
      if (write) request.auditCaller = { actor: tokenActor(key.id, request), orgId: key.owner }
      return
    }
    await sessions.checkSession(request)
    if (write) await sessions.checkCsrf(request)
  }
  const read = publishSecurity(hook(false), TENANT_READ_SECURITY)
  const write = publishSecurity(hook(true), TENANT_WRITE_SECURITY)
  return {
    /** Route options of a /v1 read that needs `permission`. */
    read: (permission: Permission) => ({ onRequest: [read], config: { permission } }),
    /** Route options of a /v1 write that needs `permission` (recorded as the S+C calls are). */
    write: (permission: Permission) => ({ onRequest: [write], config: { permission, audited: true } }),
  }
}

export type TenantAuth = ReturnType<typeof tenantAuth>
