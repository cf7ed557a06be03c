import { type App, type Kv, rateLimit, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { OrgChanges, Organization, SignUp } from './schemas.ts'
import { changeOrg, orgView, requireOrg, rotateKey, signUp } from './service.ts'

interface OrgDeps {
  db: IdpDb
  sealer: Sealer
  kv: Kv
  signupRatePerMinute: number
}

/** An organization's own account (identity-provider.md, Organizations): sign up, see and change itself, rotate its key. */
export function orgRoutes(app: App, { db, sealer, kv, signupRatePerMinute }: OrgDeps) {
  const tags = ['organizations']
  const signupLimit = rateLimit(
    kv,
    'org-signup',
    { limit: signupRatePerMinute, windowMs: 60_000 },
    'slow_down',
  )
  const security = [{ organizationKey: [] }]

  app.post(
    '/orgs/signup',
    {
      schema: {
        summary: 'Sign an organization up; its API key (svc_org_…) is shown once',
        tags,
        body: SignUp,
        response: {
          201: Type.Object({ organization_id: Type.String(), name: Type.String(), api_key: Type.String() }),
        },
      },
    },
    async (request, reply) => {
      await signupLimit(request, reply)
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send(await signUp(db, sealer, request.body))
    },
  )
  app.get(
    '/orgs/me',
    { schema: { summary: 'The calling organization', tags, security, response: { 200: Organization } } },
    async (request) => orgView(await requireOrg(db, request)),
  )
  app.patch(
    '/orgs/me',
    {
      schema: {
        summary: 'Change the name, contact, agent deny list or member MFA rule',
        tags,
        security,
        body: OrgChanges,
        response: { 200: Organization },
      },
    },
    async (request) => changeOrg(db, await requireOrg(db, request), request.body),
  )
  app.post(
    '/orgs/rotate-key',
    {
      schema: {
        summary: 'A new API key; the old one stops working at once',
        tags,
        security,
        response: { 200: Type.Object({ organization_id: Type.String(), api_key: Type.String() }) },
      },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send(await rotateKey(db, await requireOrg(db, request))),
  )
}
