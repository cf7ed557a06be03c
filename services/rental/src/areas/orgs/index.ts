import { defineArea } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import type { RentalDb } from '../../db.ts'
import type { Actor } from '../events/index.ts'
import { changeEmailByIdentity, type LeaveOutcome, leaveByIdentity, memberBySubject } from './identity.ts'
import { localeRoutes } from './locale-routes.ts'
import { orgRoutes } from './routes.ts'
import { type MoneyLocale, type Page } from '@svc/kit'
import { ensureMembership, invite, memberList, type Recorder, type SignedIn } from './service.ts'
import { type ProfilePatch, profile, setProfile } from './profile.ts'
import { putRole, removeRole, roleList } from './roles.ts'
import { eraseOrgMembers, lockOrg, type OrgKind, orgIdOfSubject, orgIdsAfter, orgsByIds } from './store.ts'
import { type Membership, refuse } from '../../http/index.ts'

export { asMembership } from './service.ts'
export { membershipColumn, type MembershipJson } from './store.ts'

export type { OrgKind } from './store.ts'
export { InvitationSchema, MemberSchema, RoleNameSchema } from './schemas.ts'

/** The platform's own provider organization: the built-in agents are its (made by migration 0021). */
export const PLATFORM_ORG_ID = 'org_platform'

export interface OrgService {
  /** The client's membership, made at its first sign-in (an invitation taken, or a new organization). */
  join(who: SignedIn): Promise<Membership>
  /** Whether the client is one of the platform's operators (by subject, or by email verified at the idp). */
  isOperator(who: { subject: string; email: string | null; emailVerified: boolean }): boolean
  /** The organization of a joined subject, or null. */
  orgIdOf(subject: string): Promise<string | null>
  /** Organizations by id, with their name and kind (unknown ids are left out). */
  orgs(
    ids: readonly string[],
    lang?: MoneyLocale,
  ): Promise<Array<{ id: string; name: string; kind: OrgKind }>>
  /** Organization ids after `after` (id order), `limit` at a time: for jobs that visit every organization. */
  idsAfter(after: string, limit: number): Promise<string[]>
  /** The joined member of an idp subject, locked in the caller's transaction (or undefined). */
  memberOfSubject(trx: RentalDb, subject: string): Promise<{ id: string; org_id: string } | undefined>
  /** The idp deleted the user: the member leaves (the last owner is kept). */
  leaveByIdentity(
    trx: RentalDb,
    actor: Actor,
    subject: string,
  ): Promise<{ outcome: LeaveOutcome; orgId: string | null }>
  /** Locks the organization in `trx` (its member changes, and its erasure, one at a time). */
  lock(trx: RentalDb, orgId: string): Promise<void>
  /** Erasure, in `trx`: members and invitations deleted, the name pseudonymised; the members' subjects. */
  eraseOrg(trx: RentalDb, orgId: string): Promise<{ members: number; subjects: string[] }>
  /** The idp changed the user's email. */
  changeEmailByIdentity(trx: RentalDb, subject: string, email: string): Promise<void>
  /** The organization's members and invitations, as GET /api/org/members lists them. */
  members(orgId: string, page: Page): ReturnType<typeof memberList>
  /** An invitation by email with a role, as POST /api/org/members makes it. */
  invite(by: Recorder, actor: Membership, input: { email: string; role: string }): ReturnType<typeof invite>
  /** The roles (built-in and custom), with how many of the organization's members hold each. */
  roles(orgId: string, lang?: MoneyLocale): ReturnType<typeof roleList>
  /** Makes or changes a custom role (PUT /v1/roles). */
  putRole(by: Recorder, actor: Membership, input: Parameters<typeof putRole>[3]): ReturnType<typeof putRole>
  /** Deletes a custom role no member or invitation holds (DELETE /v1/roles/{name}). */
  removeRole(by: Recorder, actor: Membership, name: string): ReturnType<typeof removeRole>
  /** The member's own profile change (PATCH /v1/users/me). */
  setProfile(by: Recorder, actor: Membership, patch: ProfilePatch): ReturnType<typeof setProfile>
  /** The member's own profile (GET /v1/users/me). */
  profile(actor: Membership): ReturnType<typeof profile>
}

/** Signed-in routes any member may call: who am I, sign out, and the operators' own check. */
// operator-only routes check the operator list, not a role's permission
const ANY_MEMBER = new Set([
  '/api/me',
  '/auth/logout',
  '/api/admin/operators',
  '/api/locale',
  '/api/auth/step-up',
  '/api/sla/credits/run',
  // operators only (checked in the handler): the insurance funds and the reserve's funding
  '/api/insurance/funds',
  '/api/insurance/reserve',
])

/**
 * Tenants and roles: client organizations, their members and invitations, the role → permissions
 * table, and the one permission check of every S and S+C route. Tables: orgs, org_members, rental_roles.
 */
export const orgsArea = defineArea({
  name: 'orgs',
  needs: ['events'],
  mount(app, ctx, use): OrgService {
    const operators = new Set(ctx.config.operators.map((o) => o.toLowerCase()))
    const service: OrgService = {
      join: (who) => ensureMembership(ctx.db, use.events, who, ctx.now()),
      isOperator: (who) =>
        operators.has(who.subject.toLowerCase()) ||
        (who.emailVerified && who.email !== null && operators.has(who.email.toLowerCase())),
      orgIdOf: (subject) => orgIdOfSubject(ctx.db, subject),
      orgs: (ids, lang) => orgsByIds(ctx.db, [...new Set(ids)], lang),
      idsAfter: (after, limit) => orgIdsAfter(ctx.db, after, limit),
      memberOfSubject: (trx, subject) => memberBySubject(trx, subject),
      leaveByIdentity: (trx, actor, subject) => leaveByIdentity(trx, use.events, actor, subject),
      changeEmailByIdentity,
      lock: lockOrg,
      eraseOrg: (trx, orgId) => eraseOrgMembers(trx, orgId, ctx.now()),
      members: (orgId, page) => memberList(ctx.db, orgId, page),
      invite: (by, actor, input) => invite(ctx.db, by, actor, input),
      roles: (orgId, lang) => roleList(ctx.db, orgId, lang),
      putRole: (by, actor, input) => putRole(ctx.db, by, actor, input),
      removeRole: (by, actor, name) => removeRole(ctx.db, by, actor, name),
      setProfile: (by, actor, patch) => setProfile(ctx.db, by, actor, patch),
      profile: (actor) => profile(ctx.db, actor),
    }
    app.decorateRequest('membership', null)
    // the permission is published with the route (`x-permission`), and every signed-in route declares one
    app.addHook('onRoute', (route) => {
      const permission = (route.config as { permission?: string } | undefined)?.permission
      if (permission) route.schema = { ...route.schema, 'x-permission': permission } as typeof route.schema
      const signedIn = [route.onRequest ?? []].flat().includes(ctx.sessions.requireSession)
      if (signedIn && !permission && !ANY_MEMBER.has(route.url))
        throw new Error(
          `${route.url} is a signed-in route with no permission: guard it with route.session(…) or route.csrf(…)`,
        )
    })
    // after the route's onRequest session (and CSRF) check, before its body is validated
    app.addHook('preValidation', async (request) => {
      const session = request.consoleSession
      const needed = request.routeOptions.config?.permission
      if (!session) {
        // an organization key's membership is set (and its scope checked) by the tenant area's hook
        if (needed && !request.membership)
          throw rentalError('unauthenticated', 'sign in first: no live console session')
        return
      }
      // read with the session (the same statement), else looked up, or made at the first sign-in
      request.membership = session.membership ?? (await service.join(session))
      if (needed && !request.membership.permissions.includes(needed)) throw refuse(needed)
    })
    return service
  },
  routes(app, ctx, use, own) {
    const routeDeps = {
      db: ctx.db,
      events: use.events,
      sessions: ctx.sessions,
      isOperator: own.isOperator,
      operators: ctx.config.operators,
    }
    orgRoutes(app, routeDeps)
    localeRoutes(app, routeDeps)
  },
})
