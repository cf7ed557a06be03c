import type { App } from '@svc/kit'
import { type TSchema, Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import { type EgressDeps, type EgressPolicy, policyDetail, setPolicy, type WebPolicy } from './service.ts'
import type { PolicyKind } from './store.ts'
import { expectedVersion, Nullable, orgOf, Params, route, sessionOf } from '../../http/index.ts'

const Strict = { additionalProperties: false } as const
/** A DNS name, or `*.` and one: letters, digits, hyphens and dots; or an IP address literal. */
const Host = Type.String({
  minLength: 1,
  maxLength: 253,
  pattern:
    '^(\\*\\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$|^[0-9A-Fa-f:.]+$',
})
const Domains = Type.Array(Host, { maxItems: 200 })

export const WebPolicySchema = Type.Object(
  {
    allowed_domains: Domains,
    denied_domains: Domains,
    max_fetches_per_task: Nullable(Type.Integer({ minimum: 0, maximum: 10_000 })),
    max_bytes: Nullable(Type.Integer({ minimum: 1, maximum: 1_073_741_824 })),
  },
  Strict,
)
export const EgressPolicySchema = Type.Object(
  {
    allow: Type.Array(
      Type.Object(
        {
          host: Host,
          ports: Type.Optional(
            Type.Array(Type.Integer({ minimum: 1, maximum: 65_535 }), {
              minItems: 1,
              maxItems: 50,
              description: 'absent: any port',
            }),
          ),
        },
        Strict,
      ),
      { maxItems: 200 },
    ),
  },
  Strict,
)

const View = (policy: TSchema) =>
  Type.Object({
    engagement_id: Type.String(),
    version: Type.Integer({ description: '0 before a policy is set' }),
    policy: Nullable(policy),
    updated_at: Nullable(Type.String()),
  })

const ABOUT: Record<PolicyKind, { summary: string; set: string; schema: TSchema }> = {
  web: {
    summary:
      'The engagement’s web-tool policy (allowed and denied domains, fetches per task, bytes) and its version',
    set: 'Sets the engagement’s web-tool policy as a new version (If-Match: "<version>" to replace only that version)',
    schema: WebPolicySchema,
  },
  egress: {
    summary:
      'The engagement’s egress policy (the hosts and ports its outbound calls may reach; null: anywhere public)',
    set: 'Sets the engagement’s egress policy as a new version: once set, outbound calls outside its allow-list are refused',
    schema: EgressPolicySchema,
  },
}

/** The policy routes of one kind, registered at the paths given literally below. */
function policyRoutes(app: App, deps: EgressDeps, kind: PolicyKind, path: string) {
  const tags = ['egress']
  const about = ABOUT[kind]
  app.get(
    path,
    {
      ...route.session('engagements:read'),
      schema: {
        summary: about.summary,
        tags,
        params: Params,
        response: { 200: View(about.schema) },
      },
    },
    async (request, reply) => {
      const view = await policyDetail(deps, orgOf(request), (request.params as { id: string }).id, kind)
      void reply.header('etag', `"${view.version}"`)
      return view
    },
  )
  app.post(
    path,
    {
      ...route.csrf('engagements:write'),
      schema: {
        summary: about.set,
        description:
          'Hosts match exactly, or `*.example.com` matches its subdomains. 409 `engagement_ended` once the engagement ended; 412 `precondition_failed` when If-Match names another version. Recorded as `engagement.policy_changed`.',
        tags,
        params: Params,
        headers: Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 20 })) }),
        body: about.schema,
        response: { 200: View(about.schema) },
      },
    },
    async (request, reply) => {
      const view = await setPolicy(
        deps,
        { orgId: orgOf(request), subject: sessionOf(request).subject, actor: actorOfRequest(request) },
        (request.params as { id: string }).id,
        kind,
        request.body as WebPolicy & EgressPolicy,
        expectedVersion((request.headers as Record<string, string | undefined>)['if-match']),
      )
      void reply.header('etag', `"${view.version}"`)
      return view
    },
  )
}

export function egressRoutes(app: App, deps: EgressDeps) {
  // GET and POST /api/engagements/:id/web, GET and POST /api/engagements/:id/egress
  policyRoutes(app, deps, 'web', '/api/engagements/:id/web')
  policyRoutes(app, deps, 'egress', '/api/engagements/:id/egress')
}
