import { type App, type Kv, rateLimit, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import { OrgChanges, Organization, SignUp } from './schemas.ts'
import { checkDomain, declareBusiness, type KybDeps } from './kyb.ts'
import { type ScreeningDeps, screenAgent } from './screening.ts'
import { changeOrg, orgView, rotateKey, signUp } from './service.ts'
import { orgKey, orgOf } from './auth.ts'

interface OrgDeps extends ScreeningDeps {
  kyb: KybDeps
  sealer: Sealer
  kv: Kv
  signupRatePerMinute: number
}

/** An organization's own account (identity-provider.md, Organizations): sign up, see and change itself, rotate its key. */
export function orgRoutes(app: App, deps: OrgDeps) {
  const { db, sealer, kv, signupRatePerMinute } = deps
  const tags = ['organizations']
  const signupLimit = rateLimit(
    kv,
    'org-signup',
    { limit: signupRatePerMinute, windowMs: 60_000 },
    'slow_down',
  )
  const security = [{ organizationKey: [] }]
  const authed = orgKey(db)

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
    {
      ...authed,
      schema: { summary: 'The calling organization', tags, security, response: { 200: Organization } },
    },
    async (request) => orgView(orgOf(request)),
  )
  app.patch(
    '/orgs/me',
    {
      ...authed,
      schema: {
        summary: 'Change the name, contact, agent deny list or member MFA rule',
        tags,
        security,
        body: OrgChanges,
        response: { 200: Organization },
      },
    },
    async (request) => changeOrg(db, orgOf(request), request.body),
  )
  app.post(
    '/orgs/rotate-key',
    {
      ...authed,
      schema: {
        summary: 'A new API key; the old one stops working at once',
        tags,
        security,
        response: { 200: Type.Object({ organization_id: Type.String(), api_key: Type.String() }) },
      },
    },
    async (request, reply) =>
      reply.header('cache-control', 'no-store').send(await rotateKey(db, orgOf(request))),
  )
  app.post(
    '/orgs/agents/screen',
    {
      ...authed,
      schema: {
        summary: 'Screen an agent against the deny list and its ledger history; receipted as kya.screening',
        tags,
        security,
        body: Type.Object(
          {
            did: Type.String({ pattern: '^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$', maxLength: 300 }),
            owner: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => screenAgent(deps, orgOf(request), request.body),
  )
  app.post(
    '/orgs/kyb',
    {
      ...authed,
      schema: {
        summary:
          'Declare the business and its domain: the attestation and the owner document to publish there',
        tags,
        security,
        body: Type.Object(
          {
            domain: Type.String({
              pattern:
                '^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,63}(:[0-9]{1,5})?$',
            }),
            entity_name: Type.String({ minLength: 1, maxLength: 200 }),
            jurisdiction: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            registration: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => declareBusiness(deps.kyb, orgOf(request), request.body),
  )
  app.post(
    '/orgs/kyb/check',
    {
      ...authed,
      schema: {
        summary: 'Fetch the domain’s owner document and check it and the organization against each other',
        tags,
        security,
      },
    },
    async (request) => checkDomain(deps.kyb, orgOf(request)),
  )
}
