import { defineArea } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import { type Membership, refuse } from './permissions.ts'
import { orgRoutes } from './routes.ts'
import { ensureMembership, type SignedIn } from './service.ts'

export interface OrgService {
  /** The client's membership, made at its first sign-in (an invitation taken, or a new organization). */
  join(who: SignedIn): Promise<Membership>
  /** Whether the client is one of the platform's operators (by subject, or by email verified at the idp). */
  isOperator(who: { subject: string; email: string | null; emailVerified: boolean }): boolean
}

/** Signed-in routes any member may call: who am I, sign out, and the operators' own check. */
const ANY_MEMBER = new Set(['/api/me', '/auth/logout', '/api/admin/operators'])

/**
 * Tenants and roles: client organizations, their members and invitations, the role → permissions
 * table, and the one permission check of every S and S+C route. Tables: orgs, org_members, rental_roles.
 */
export const orgsArea = defineArea({
  name: 'orgs',
  mount(app, ctx): OrgService {
    const operators = new Set(ctx.config.operators.map((o) => o.toLowerCase()))
    const service: OrgService = {
      join: (who) => ensureMembership(ctx.db, who, ctx.now()),
      isOperator: (who) =>
        operators.has(who.subject.toLowerCase()) ||
        (who.emailVerified && who.email !== null && operators.has(who.email.toLowerCase())),
    }
    app.decorateRequest('membership', null)
    // the permission is published with the route (`x-permission`), and every signed-in route declares one
    app.addHook('onRoute', (route) => {
      const permission = (route.config as { permission?: string } | undefined)?.permission
      if (permission) route.schema = { ...route.schema, 'x-permission': permission } as typeof route.schema
      const signedIn = [route.onRequest ?? []].flat().includes(ctx.sessions.requireSession)
      if (signedIn && !permission && !ANY_MEMBER.has(route.url))
        throw new Error(`${route.url} is a signed-in route with no permission: add can(…) to its options`)
    })
    // after the route's onRequest session (and CSRF) check, before its body is validated
    app.addHook('preValidation', async (request) => {
      const session = request.consoleSession
      const needed = request.routeOptions.config?.permission
      if (!session) {
        if (needed) throw rentalError('unauthenticated', 'sign in first: no live console session')
        return
      }
      request.membership = await service.join(session)
      if (needed && !request.membership.permissions.includes(needed)) throw refuse(needed)
    })
    return service
  },
  routes(app, ctx, _use, own) {
    orgRoutes(app, {
      db: ctx.db,
      sessions: ctx.sessions,
      isOperator: own.isOperator,
      operators: ctx.config.operators,
    })
  },
})
