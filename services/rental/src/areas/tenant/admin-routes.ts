import { type App, Lang, LangQuery, moneyLocaleOf, pageOf, PageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import { actorOfRequest, tokenActor } from '../events/index.ts'
import { InvitationSchema, MemberSchema, RoleNameSchema } from '../orgs/index.ts'
import { ApiTokenSchema as ApiToken, IssuedTokenSchema as IssuedToken } from '../tokens/index.ts'
import { ORG_KEY_SCOPES } from '../tokens/index.ts'
import { Nullable, type TenantDeps } from './deps.ts'
import { deleteSecret, putSecret, SECRET_NAME, secretList } from './secrets.ts'
import { membershipOf, orgOf, PERMISSIONS } from '../../http/index.ts'

const tags = ['tenant']

const Secret = Type.Object({
  name: Type.String(),
  version: Type.Integer(),
  reference: Type.String({ description: 'secret://name: how a connection or webhook names it' }),
  created_by: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
})
const SecretName = Type.String({
  pattern: SECRET_NAME,
  description: 'a-z first; a-z, 0-9, _ . - after; 64 at most',
})

const Role = Type.Object({
  name: Type.String(),
  description: Type.String(),
  permissions: Type.Array(Type.String()),
  builtin: Type.Boolean(),
  members: Type.Integer({ description: 'how many of the organization’s members and invitations hold it' }),
})
const Permission = Type.Union(PERMISSIONS.map((p) => Type.Literal(p)))

/** The notification choices a member makes (each on or off; those not given are kept). */
const NOTIFICATIONS = [
  'task_completed',
  'approval_requested',
  'invoice_issued',
  'incident_opened',
  'weekly_summary',
]
const Notifications = Type.Object(
  Object.fromEntries(NOTIFICATIONS.map((n) => [n, Type.Optional(Type.Boolean())])),
  { additionalProperties: false },
)
const Locale = Lang()

const Profile = Type.Object({
  member_id: Type.String(),
  email: Nullable(Type.String()),
  role: Type.String(),
  display_name: Nullable(Type.String()),
  locale: Nullable(Locale),
  notifications: Type.Record(Type.String(), Type.Boolean()),
})

/** The one plan there is, in both languages (a seam: no plans area yet). */
const PAY_AS_YOU_GO = {
  en: { name: 'Pay as you go', description: 'each task is paid from its escrow; no subscription' },
  ar: { name: 'الدفع حسب الاستخدام', description: 'تُدفع كل مهمة من ضمانها؛ بلا اشتراك' },
} as const

const Org = Type.Object({
  id: Type.String(),
  name: Type.String(),
  kind: Type.String(),
  plan: Type.Object({
    name: Type.String(),
    description: Type.String(),
  }),
  usage: Type.Object({
    month: Type.String({ description: 'YYYY-MM (UTC)' }),
    tasks: Type.Integer(),
    completed: Type.Integer(),
    spend_fils: Type.Integer({
      description: 'AED in fils: the tasks’ prices, canceled and rejected ones left out',
    }),
    currency: Type.Literal('AED'),
  }),
  onboarding: Type.Object({
    state: Type.String({
      description:
        'the business check’s state (awaiting_domain, pending_review, approved, rejected), or not_started',
    }),
    required: Type.Boolean({
      description: 'whether an approved check is needed to publish or hire above the limit',
    }),
    steps: Type.Array(Type.Object({ name: Type.String(), done: Type.Boolean() })),
  }),
  did: Nullable(
    Type.String({ description: 'the client DID the organization signs with (its latest engagement’s)' }),
  ),
  ledger: Type.Object({ url: Type.String(), checkpoint_url: Type.String() }),
})

/** The onboarding steps as the tenant console shows them, from the onboarding area's status. */
function onboardingSummary(status: Awaited<ReturnType<TenantDeps['onboarding']['status']>>) {
  const kyb = status.kyb
  return {
    state: kyb?.state ?? 'not_started',
    required: status.kyb_required,
    steps: [
      { name: 'business_check_submitted', done: kyb !== null },
      { name: 'domain_verified', done: kyb?.domain_verified === true },
      { name: 'business_check_approved', done: status.kyb_approved },
      { name: 'agent_screened', done: status.kya.length > 0 },
    ],
  }
}

/** The actor of a /v1 call: the organization key, or the signed-in user. */
const actorOf = (request: FastifyRequest) =>
  request.orgKey ? tokenActor(request.orgKey.id, request) : actorOfRequest(request)

/** Keys, secrets, members, roles, the member's own profile and the organization. */
export function adminRoutes(app: App, deps: TenantDeps) {
  const { auth } = deps
  const by = (request: FastifyRequest) => ({ events: deps.events, actor: actorOf(request) })
  app.post(
    '/v1/auth/keys',
    {
      ...auth.write('keys:write'),
      schema: {
        summary:
          'Issues an organization key (ork_…) with scopes of /v1 and the A2A surface; the plaintext is shown once (owners and admins)',
        tags,
        body: Type.Object(
          {
            label: Type.String({ minLength: 1, maxLength: 100 }),
            scopes: Type.Array(Type.Union(ORG_KEY_SCOPES.map((s) => Type.Literal(s))), {
              minItems: 1,
              maxItems: 20,
            }),
            expires_at: Type.Optional(Type.String({ format: 'date-time', maxLength: 40 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: IssuedToken },
      },
    },
    async (request, reply) => {
      const { label, scopes, expires_at } = request.body
      const key = await deps.tokens.issueOrgKey(membershipOf(request), {
        label,
        scopes,
        expiresAt: expires_at === undefined ? null : new Date(expires_at),
      })
      return reply.code(201).send(key)
    },
  )
  app.get(
    '/v1/auth/keys',
    {
      ...auth.read('org:read'),
      schema: {
        summary: 'The organization’s live keys (never their plaintext); revoked with DELETE /api/tokens/{id}',
        tags,
        response: { 200: Type.Object({ keys: Type.Array(ApiToken) }) },
      },
    },
    async (request) => ({ keys: await deps.tokens.orgKeys(orgOf(request)) }),
  )
  app.put(
    '/v1/secrets',
    {
      ...auth.write('secrets:write'),
      schema: {
        summary:
          'Stores a named secret in the organization’s vault, sealed (a new version if the name is known); the value is never answered',
        tags,
        body: Type.Object(
          { name: SecretName, value: Type.String({ minLength: 1, maxLength: 8192 }) },
          { additionalProperties: false },
        ),
        response: { 200: Secret },
      },
    },
    async (request) => putSecret(deps, orgOf(request), actorOf(request), request.body),
  )
  app.get(
    '/v1/secrets',
    {
      ...auth.read('secrets:read'),
      schema: {
        summary: 'The vault’s secrets: names, versions and times, never values',
        tags,
        response: { 200: Type.Object({ secrets: Type.Array(Secret) }) },
      },
    },
    async (request) => ({ secrets: await secretList(deps.db, orgOf(request)) }),
  )
  app.delete(
    '/v1/secrets/:name',
    {
      ...auth.write('secrets:write'),
      schema: {
        summary: 'Removes a secret from the vault (another organization’s answers 404)',
        tags,
        params: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: Type.Object({ name: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => deleteSecret(deps.db, orgOf(request), request.params.name),
  )
  app.get(
    '/v1/users',
    {
      ...auth.read('org:read'),
      schema: {
        summary: 'The organization’s members and pending invitations',
        tags,
        querystring: PageQuery,
        response: { 200: Type.Object({ members: Type.Array(MemberSchema) }) },
      },
    },
    async (request) => deps.orgs.members(orgOf(request), pageOf(request.query)),
  )
  app.post(
    '/v1/users',
    {
      ...auth.write('members:write'),
      schema: {
        summary: 'Adds a member by email with a role: an invitation taken at their next sign-in',
        tags,
        body: InvitationSchema,
        response: { 201: MemberSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await deps.orgs.invite(by(request), membershipOf(request), request.body)),
  )
  app.get(
    '/v1/roles',
    {
      ...auth.read('org:read'),
      schema: {
        summary: 'The roles: built-in ones and custom ones, with how many members hold each',
        description:
          'Built-in roles are described in `lang`, else the member’s language, else Accept-Language’s.',
        tags,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Type.Object({ roles: Type.Array(Role) }) },
      },
    },
    async (request) => ({ roles: await deps.orgs.roles(orgOf(request), moneyLocaleOf(request)) }),
  )
  app.put(
    '/v1/roles',
    {
      ...auth.write('roles:write'),
      schema: {
        summary:
          'Makes or changes a custom role: a named set of existing permissions (built-in roles do not change; a role in use keeps members:owners)',
        tags,
        body: Type.Object(
          {
            name: RoleNameSchema,
            permissions: Type.Array(Permission, { maxItems: 100 }),
            description: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ ...Role.properties, created: Type.Boolean() }) },
      },
    },
    async (request) => deps.orgs.putRole(by(request), membershipOf(request), request.body),
  )
  app.delete(
    '/v1/roles/:name',
    {
      ...auth.write('roles:write'),
      schema: {
        summary:
          'Deletes a custom role; built-in roles stay (409), and a role members or invitations hold stays until they have another (409 naming how many)',
        tags,
        params: Type.Object({ name: RoleNameSchema }),
        response: { 200: Type.Object({ name: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => deps.orgs.removeRole(by(request), membershipOf(request), request.params.name),
  )
  app.get(
    '/v1/users/me',
    {
      ...auth.read('org:read'),
      schema: {
        summary:
          'The signed-in member’s own profile, and the identity provider’s account page (password, second factor)',
        tags,
        response: { 200: Type.Object({ ...Profile.properties, account_url: Type.String() }) },
      },
    },
    async (request) => ({
      ...(await deps.orgs.profile(membershipOf(request))),
      account_url: `${deps.idpUrl.replace(/\/+$/, '')}/ui/account`,
    }),
  )
  app.patch(
    '/v1/users/me',
    {
      ...auth.write('profile:write'),
      schema: {
        summary: 'The signed-in member’s own profile: display name, language, notification choices',
        tags,
        body: Type.Object(
          {
            display_name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
            locale: Type.Optional(Nullable(Locale)),
            notifications: Type.Optional(Notifications),
          },
          { additionalProperties: false },
        ),
        response: { 200: Profile },
      },
    },
    async (request) =>
      deps.orgs.setProfile(
        by(request),
        membershipOf(request),
        request.body as Parameters<TenantDeps['orgs']['setProfile']>[2],
      ),
  )
  app.get(
    '/v1/org',
    {
      ...auth.read('org:read'),
      schema: {
        summary:
          'The organization: name, plan, usage this month, onboarding state, its DID and its proof-of-action ledger',
        description:
          'The default name and the plan in `lang`, else the member’s language, else Accept-Language’s.',
        tags,
        querystring: LangQuery({ additionalProperties: false }),
        response: { 200: Org },
      },
    },
    async (request) => {
      const orgId = orgOf(request)
      const lang = moneyLocaleOf(request)
      const [org] = await deps.orgs.orgs([orgId], lang)
      if (!org) throw rentalError('not_found', 'the organization is gone')
      const now = deps.now()
      const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
      const usage = await deps.tasks.usageSince(orgId, monthStart)
      const ledger = deps.ledgerUrl.replace(/\/+$/, '')
      return {
        id: org.id,
        name: org.name,
        kind: org.kind,
        // a seam: no plans area yet (docs/rental/tenant.md)
        plan: PAY_AS_YOU_GO[lang],
        usage: {
          month: monthStart.toISOString().slice(0, 7),
          tasks: usage.tasks,
          completed: usage.completed,
          spend_fils: usage.spendFils,
          currency: 'AED' as const,
        },
        onboarding: onboardingSummary(await deps.onboarding.status(orgId)),
        did: (await deps.engagements.latestClientDidOfOrg(orgId)) ?? null,
        ledger: { url: ledger, checkpoint_url: `${ledger}/checkpoint` },
      }
    },
  )
}
