import { type App, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import {
  type CallDeps,
  CALLS_PATH,
  type Credential,
  callOf,
  refresh,
  requestCall,
  taskOfCredential,
} from './calls.ts'
import {
  actionList,
  bind,
  connectionList,
  connectionOfEngagement,
  preview,
  revoke,
  toolList,
} from './service.ts'
import { Nullable, orgOf, Params, route } from '../../http/index.ts'

const Url = Type.String({
  minLength: 8,
  maxLength: 2000,
  description: 'the MCP server’s Streamable HTTP endpoint',
})
const ApiKey = Type.String({
  minLength: 8,
  maxLength: 4096,
  pattern: '^[\\x21-\\x7e]+$',
  description: 'the tool server’s API key (sent as a Bearer token; stored sealed, never answered)',
})
const Approval = Type.Union([Type.Literal('never'), Type.Literal('always')])
const ToolName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.\\-/]+$' })
const Auth = Type.Union([
  Type.Object({ type: Type.Literal('api_key'), api_key: ApiKey }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal('idp_resource') },
    {
      additionalProperties: false,
      description:
        'a token the rental obtains from the idp for the server’s registered resource (RFC 9728 metadata discovered from the server, RFC 8707 `resource=`): nothing secret is stored',
    },
  ),
])
const BindBody = Type.Object(
  {
    url: Url,
    api_key: Type.Optional(ApiKey),
    auth: Type.Optional(Auth),
    tools: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: ToolName,
            approval: Type.Optional(Approval),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 200,
          description: 'the tools allowed (default: all, those that may write held for approval)',
        },
      ),
    ),
  },
  { additionalProperties: false },
)
const Annotations = Type.Object({
  read_only: Type.Boolean(),
  destructive: Type.Boolean(),
  idempotent: Type.Boolean(),
})
const ToolFields = {
  name: Type.String(),
  title: Nullable(Type.String()),
  description: Nullable(Type.String()),
  input_schema: Type.Object({}, { additionalProperties: true }),
  annotations: Annotations,
  approval: Nullable(Approval),
}
const Server = Nullable(Type.Object({ name: Type.String(), version: Nullable(Type.String()) }))
const Health = Type.Object({
  calls: Type.Integer(),
  failures: Type.Integer(),
  last_success_at: Nullable(Type.String()),
  last_error_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  last_latency_ms: Nullable(Type.Integer()),
})
const Connection = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  url: Type.String(),
  auth_mode: Type.Union([Type.Literal('api_key'), Type.Literal('idp_resource')]),
  key_hint: Nullable(Type.String({ description: 'the key’s last four characters (api_key)' })),
  resource: Nullable(
    Type.String({ description: 'idp_resource: the resource identifier the idp’s tokens are for' }),
  ),
  server: Server,
  allowed_tools: Type.Array(Type.Object({ name: Type.String(), approval: Approval })),
  created_at: Type.String(),
  health: Health,
})
const ActionState = Type.Union([
  Type.Literal('pending_approval'),
  Type.Literal('approved'),
  Type.Literal('running'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('timed_out'),
  Type.Literal('refused'),
  Type.Literal('rejected'),
  Type.Literal('canceled'),
])
const Action = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  connection_id: Type.String(),
  task_id: Type.String(),
  agent_did: Type.String(),
  tool: Type.String(),
  arguments_sha256: Type.String({ description: 'SHA-256 (hex) of the arguments’ JCS form' }),
  state: ActionState,
  reason: Nullable(Type.String()),
  approval_id: Nullable(Type.String()),
  approved_by: Nullable(Type.String({ description: 'the member who approved it (held calls)' })),
  decided_by: Nullable(Type.String()),
  result: Type.Unknown({ description: 'the MCP CallToolResult (null when not made, or over 64 KiB)' }),
  result_sha256: Nullable(Type.String({ description: 'SHA-256 (hex) of the result’s JCS form' })),
  latency_ms: Nullable(Type.Integer()),
  attempts: Type.Integer(),
  requested_at: Type.String(),
  ended_at: Nullable(Type.String()),
  receipt: Nullable(Type.Object({ id: Type.String(), leaf_hash: Nullable(Type.String()) })),
})
const Actions = Type.Object({
  actions: Type.Array(Action),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
})
const ActionParams = Type.Object(
  { id: Type.String({ pattern: '^act_[A-Za-z0-9_-]{16}$', maxLength: 20 }) },
  { additionalProperties: false },
)
const Page = Type.Object(pageQuery().properties, { additionalProperties: false })

/** The console's connect routes and the agents' tool-call route. */
export function connectRoutes(app: App, deps: CallDeps) {
  const tags = ['connect']
  const read = route.session('connect:read')
  const write = route.csrf('connect:write')
  app.post(
    '/api/engagements/:id/connect/preview',
    {
      ...write,
      schema: {
        summary:
          'Validates a tool server key without storing it: the tools it reaches and what binding would allow',
        description:
          'Connects with the official MCP SDK client (Streamable HTTP), lists the tools (`tools/list`) and answers each with `would_allow` and its `approval`. A URL refused, a key the server refuses, a server that fails or does not answer within RENTAL_CONNECT_TIMEOUT_MS: 400 `tool_server_refused` with the server’s own error.',
        tags,
        params: Params,
        body: BindBody,
        response: {
          200: Type.Object({
            url: Type.String(),
            resource: Nullable(Type.String()),
            server: Server,
            tools: Type.Array(Type.Object({ ...ToolFields, would_allow: Type.Boolean() })),
            stored: Type.Literal(false),
          }),
        },
      },
    },
    async (request) =>
      preview(deps, orgOf(request), request.params.id, request.body, actorOfRequest(request)),
  )
  app.post(
    '/api/engagements/:id/connect',
    {
      ...write,
      schema: {
        summary: 'Binds the engagement to a tool server: the key sealed, with the tools allowed',
        description:
          'The key is checked as preview does, then kept sealed (AES-256-GCM) and never answered. One connection per engagement: a second is 409 `already_connected`. A tool with approval `always` (default: every tool not read-only) waits for a member’s approval at each call.',
        tags,
        params: Params,
        body: BindBody,
        response: { 201: Connection },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await bind(deps, orgOf(request), request.params.id, request.body, actorOfRequest(request))),
  )
  app.get(
    '/api/engagements/:id/connect',
    {
      ...read,
      schema: {
        summary: 'The engagement’s connection (no key), or 409 `not_connected`',
        tags,
        params: Params,
        response: { 200: Connection },
      },
    },
    async (request) => connectionOfEngagement(deps, orgOf(request), request.params.id),
  )
  app.delete(
    '/api/engagements/:id/connect',
    {
      ...write,
      schema: {
        summary: 'Revokes the connection: the sealed key deleted, waiting tool calls canceled',
        tags,
        params: Params,
        response: {
          200: Type.Object({
            revoked: Type.Literal(true),
            connection_id: Type.String(),
            canceled_actions: Type.Array(Type.String()),
          }),
        },
      },
    },
    async (request) => revoke(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
  app.get(
    '/api/engagements/:id/connect/connections',
    {
      ...read,
      schema: {
        summary: 'The engagement’s connections with their health (last success, last error, latency)',
        tags,
        params: Params,
        response: { 200: Type.Object({ connections: Type.Array(Connection) }) },
      },
    },
    async (request) => connectionList(deps, orgOf(request), request.params.id),
  )
  app.get(
    '/api/engagements/:id/connect/tools',
    {
      ...read,
      schema: {
        summary: 'The tools the key reached at bind, each allowed or not, with its approval',
        tags,
        params: Params,
        response: {
          200: Type.Object({ tools: Type.Array(Type.Object({ ...ToolFields, allowed: Type.Boolean() })) }),
        },
      },
    },
    async (request) => toolList(deps, orgOf(request), request.params.id),
  )
  app.get(
    '/api/engagements/:id/connect/actions',
    {
      ...read,
      schema: {
        summary: 'The tool calls the engagement’s agents asked for, newest first (paged)',
        tags,
        params: Params,
        querystring: Page,
        response: { 200: Actions },
      },
    },
    async (request) => actionList(deps, orgOf(request), request.params.id, pageOf(request.query)),
  )
  app.get(
    '/api/engagements/:id/connect/approvals',
    {
      ...read,
      schema: {
        summary:
          'The tool calls waiting for a member (decided at POST /api/approvals/{approval_id}/approve or reject)',
        tags,
        params: Params,
        querystring: Page,
        response: { 200: Actions },
      },
    },
    async (request) =>
      actionList(deps, orgOf(request), request.params.id, pageOf(request.query), ['pending_approval']),
  )
  app.post(
    '/api/connect/actions/:id/refresh',
    {
      ...write,
      schema: {
        summary: 'Makes an approved call now, or makes an idempotent one again (a fresh outcome and receipt)',
        description:
          'An action still held, refused, rejected or canceled, or one whose tool is not idempotent (by the server’s annotations), is 409 `action_not_refreshable` naming why.',
        tags,
        params: ActionParams,
        response: { 200: Action },
      },
    },
    async (request) => refresh(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
  // the credential is checked before the body is read (a request without one is 401 whatever it holds)
  const credentials = new WeakMap<object, Credential>()
  const withCredential = async (
    request: { headers: { authorization?: string | undefined } },
    reply: { header(name: string, value: string): unknown },
  ) => {
    try {
      credentials.set(request, await taskOfCredential(deps, request.headers.authorization))
    } catch (err) {
      reply.header('www-authenticate', 'Bearer realm="rental-tool-calls", error="invalid_token"')
      throw err
    }
  }
  app.get(
    `${CALLS_PATH}/:id`,
    {
      onRequest: withCredential,
      schema: {
        summary: 'A tool call the task’s agent asked for, as it stands (a held call’s outcome, read later)',
        description:
          'Authorization: Bearer <the task’s tool-call credential>, as for POST /api/connect/calls. Answers the action: its state, and once the call was made its `result` (the MCP CallToolResult). An action of another task is 404 `action_not_found`.',
        tags,
        security: [{ taskToolToken: [] }],
        params: ActionParams,
        response: { 200: Action },
      },
    },
    async (request) => callOf(deps, credentials.get(request)!, request.params.id),
  )
  app.post(
    CALLS_PATH,
    {
      onRequest: withCredential,
      bodyLimit: deps.config.connect.maxArgumentBytes + 64 * 1024,
      schema: {
        summary:
          'An agent’s tool call during its task (Authorization: Bearer <the task’s tool-call credential>)',
        description:
          'The credential (`svc_connect_token`) and this URL (`svc_connect_url`) are in the metadata of the message the agent gets for a task whose engagement has a connection. 200: the call was made (state completed, failed or timed_out) and `result` is the MCP CallToolResult; 202: the policy holds it for a member’s approval (state pending_approval; the call is made once approved); 403 `tool_refused`: the binding does not allow the tool (recorded); 413 `tool_arguments_too_large`.',
        tags,
        security: [{ taskToolToken: [] }],
        body: Type.Object(
          {
            tool: ToolName,
            arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          },
          { additionalProperties: false },
        ),
        response: { 200: Action, 202: Action },
      },
    },
    async (request, reply) => {
      const answer = await requestCall(deps, credentials.get(request)!, request.body)
      return reply.code(answer.status).send(answer.action)
    },
  )
}
