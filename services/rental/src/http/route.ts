import { idempotentRoute } from '@svc/kit'
import type { RentalDb } from '../db.ts'
import { orgOf, type Permission } from './permissions.ts'
import { requireCsrf, requireSession, requireStepUp, type StepUpWhen } from './session.ts'

const needing = (permission?: Permission) => (permission ? { permission } : {})

/**
 * The guard of a signed-in route, in one line of its options: `{ ...route.csrf('tasks:write'), schema }`.
 * It sets the session hooks and the permission the orgs area checks after them (403 `forbidden`
 * naming it); the route's OpenAPI security follows from the hooks (session.ts), never by hand.
 * The permission is left out only on the routes any member may call (orgs area, ANY_MEMBER).
 */
export const route = {
  /** An S route (a read): a live console session. */
  session: (permission?: Permission) => ({ onRequest: [requireSession], config: needing(permission) }),
  /** An S+C route (a write): a live console session and its CSRF token. */
  csrf: (permission?: Permission) => ({
    onRequest: [requireSession, requireCsrf],
    config: needing(permission),
  }),
  /**
   * A sensitive S+C route: also a recent second factor (step-up), checked after the body, when the
   * rules are on and `when` (default: always) says so for the request.
   */
  stepUp: (permission: Permission, when?: StepUpWhen) => ({
    onRequest: [requireSession, requireCsrf],
    config: { permission },
    preHandler: [requireStepUp(when)],
  }),
}

/**
 * Route options of a creating write a client may resend: an `Idempotency-Key` kept per organization
 * under `scope` (kit idempotentRoute); the route's schema adds `headers: IdempotencyKeyHeader`.
 */
export const idempotent = (db: RentalDb, scope: string) => idempotentRoute({ db, scope, owner: orgOf })
