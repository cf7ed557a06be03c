import { type App, LangQuery, moneyLocaleOf, PageQuery, pageOf } from '@svc/kit'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import { ApprovalSchema as Approval } from '../approvals/index.ts'
import type { ConnectService } from '../connect/index.ts'
import { labelOf, TaskWords } from '../tasks/index.ts'
import { verifyWithAnchor } from './anchor-check.ts'
import { DateTime, dateOf, type TenantDeps, Nullable } from './deps.ts'
import { orgOf } from '../../http/index.ts'

const tags = ['tenant']
const TaskState = Type.Union(
  [
    'submitted',
    'working',
    'input-required',
    'completed',
    'failed',
    'canceled',
    'rejected',
    // a tool action's own states (completed, failed, canceled and rejected are shared)
    'pending_approval',
    'approved',
    'running',
    'timed_out',
    'refused',
  ].map((s) => Type.Literal(s)),
)
const Id = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_:.-]+$' })

const Execution = Type.Object({
  kind: Type.Union([Type.Literal('task'), Type.Literal('tool_action')], {
    description: 'a task, or a tool call an agent asked for during one (connect)',
  }),
  id: Type.String(),
  state: Type.String(),
  agent_did: Type.String(),
  engagement_id: Nullable(Type.String()),
  trial_id: Nullable(Type.String()),
  price_fils: Type.Integer(),
  error: Nullable(Type.String()),
  receipt_id: Nullable(Type.String()),
  created_at: Type.String(),
  started_at: Nullable(Type.String()),
  completed_at: Nullable(Type.String()),
  tool: Nullable(Type.String({ description: 'tool_action: the tool called' })),
  task_id: Nullable(Type.String({ description: 'tool_action: the task it was asked for in' })),
  ...TaskWords,
})

const Connection = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  provider: Type.String({ description: 'the tool server’s host' }),
  state: Type.Union([Type.Literal('healthy'), Type.Literal('degraded'), Type.Literal('failing')]),
  checked_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  latency_ms: Nullable(Type.Integer()),
})

const AuditEntry = Type.Object({
  id: Type.String({ description: 'evt_<seq>' }),
  seq: Type.Integer(),
  at: Type.String({ description: 'when' }),
  type: Type.String({ description: 'what: the change (task.created, …) or request.answered' }),
  who: Type.Object({
    type: Type.String({ description: 'user, token (an agt_ token or an organization key), system, …' }),
    id: Nullable(Type.String()),
  }),
  from: Type.Object({ ip: Nullable(Type.String()), request_id: Nullable(Type.String()) }),
  outcome: Type.Union([Type.Literal('ok'), Type.Literal('refused'), Type.Literal('failed')]),
  subjects: Type.Record(Type.String(), Type.String()),
  data: Type.Unknown(),
  chain: Nullable(
    Type.Object({
      pos: Type.Integer({ description: 'the entry’s place in the organization’s chain' }),
      hash: Type.String({ description: 'SHA-256 of the previous hash and this entry (hex)' }),
    }),
  ),
})

const ChainReport = Type.Object({
  ok: Type.Boolean(),
  checked: Type.Integer(),
  head: Type.Object({ pos: Type.Integer(), hash: Type.String() }),
  problem: Nullable(
    Type.Object({
      pos: Type.Integer(),
      seq: Nullable(Type.Integer()),
      problem: Type.Union([
        Type.Literal('edited'),
        Type.Literal('removed'),
        Type.Literal('head_mismatch'),
        Type.Literal('anchor_mismatch'),
      ]),
      message: Type.String(),
    }),
  ),
  anchor: Nullable(
    Type.Object(
      {
        pos: Type.Integer({ description: 'the anchored head’s place in the chain' }),
        receipt_id: Type.String(),
        anchored_at: Type.String(),
        ledger_index: Nullable(Type.Integer()),
        state: Type.Union(
          [
            Type.Literal('matches'),
            Type.Literal('mismatch'),
            Type.Literal('pending'),
            Type.Literal('ledger_unreachable'),
          ],
          {
            description:
              'matches: the ledger’s head is the chain’s link at that place; mismatch: it is not (or the ledger’s entry is no anchor of ours); pending: not on the ledger yet',
          },
        ),
        message: Type.String(),
      },
      { description: 'the latest head published to the ledger (RENTAL_AUDIT_ANCHOR_S), read back from it' },
    ),
  ),
})

const finite = (name: string, value: number | undefined) => {
  // Ajv skips range checks of a value the querystring coercion made Infinity (limit=1e309)
  if (value !== undefined && !Number.isSafeInteger(value))
    throw rentalError('invalid_request', `querystring.${name} must be a finite integer`)
}

const periodOf = (query: { since?: string | undefined; until?: string | undefined }) => {
  const since = dateOf(query.since)
  const until = dateOf(query.until)
  if (since && until && since >= until) throw rentalError('invalid_request', 'since must be before until')
  return { since, until }
}

/** A connection's health as the tenant console shows it, from the connect area's counters. */
function connectionHealth(c: Awaited<ReturnType<ConnectService['health']>>[number]) {
  const lastSuccess = c.last_success_at ? Date.parse(c.last_success_at) : 0
  const lastError = c.last_error_at ? Date.parse(c.last_error_at) : 0
  const state = lastError > lastSuccess ? 'failing' : c.failures > 0 ? 'degraded' : 'healthy'
  const checked = Math.max(lastSuccess, lastError)
  return {
    id: c.id,
    engagement_id: c.engagement_id,
    provider: new URL(c.url).host,
    state: state as 'failing' | 'degraded' | 'healthy',
    checked_at: checked ? new Date(checked).toISOString() : null,
    last_error: c.last_error,
    latency_ms: c.last_latency_ms,
  }
}

/** The tenant console's operations views: executions, connections' health, pending approvals, the audit record. */
export function opsRoutes(app: App, deps: TenantDeps) {
  const { auth } = deps
  app.get(
    '/v1/executions',
    {
      ...auth.read('tasks:read'),
      schema: {
        summary:
          'The organization’s executions (its tasks and tool actions), newest first across both, by kind, state, agent, engagement, period; cursor paging',
        tags,
        querystring: Type.Object(
          {
            kind: Type.Optional(Type.Union([Type.Literal('task'), Type.Literal('tool_action')])),
            state: Type.Optional(TaskState),
            agent: Type.Optional(Type.String({ minLength: 1, maxLength: 300, pattern: '^did:[a-z0-9]+:' })),
            engagement: Type.Optional(Id),
            since: Type.Optional(DateTime),
            until: Type.Optional(DateTime),
            cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, pattern: '^[A-Za-z0-9_-]+$' })),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
            ...LangQuery().properties,
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            executions: Type.Array(Execution),
            next_cursor: Nullable(
              Type.String({ description: 'the `cursor` of the next page; null at the end' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query
      finite('limit', q.limit)
      const { rows, nextCursor } = await deps.tasks.executions(
        orgOf(request),
        {
          kind: q.kind,
          state: q.state,
          agentDid: q.agent,
          engagementId: q.engagement,
          ...periodOf(q),
        },
        { limit: q.limit, cursor: q.cursor },
        [deps.connect.executions],
      )
      const labels = await deps.tasks.labels(
        orgOf(request),
        rows.map((r) => r.task_id ?? r.id),
        moneyLocaleOf(request),
      )
      return {
        executions: rows.map((r) => ({
          ...labelOf(labels, r.task_id ?? r.id),
          kind: r.kind,
          tool: r.tool,
          task_id: r.task_id,
          id: r.id,
          state: r.state,
          agent_did: r.agent_did,
          engagement_id: r.engagement_id,
          trial_id: r.trial_id,
          price_fils: r.price_fils,
          error: r.error,
          receipt_id: r.receipt_id,
          created_at: r.created_at.toISOString(),
          started_at: r.started_at?.toISOString() ?? null,
          completed_at: r.completed_at?.toISOString() ?? null,
        })),
        next_cursor: nextCursor,
      }
    },
  )
  app.get(
    '/v1/connect/connections/health',
    {
      ...auth.read('connections:read'),
      schema: {
        summary:
          'The health of the organization’s connections (the connect area’s tool-server bindings): `failing` when the last call failed, `degraded` when some failed since, `healthy` otherwise',
        tags,
        response: {
          200: Type.Object({ connections: Type.Array(Connection), checked_at: Type.String() }),
        },
      },
    },
    async (request) => ({
      connections: (await deps.connect.health(orgOf(request))).map(connectionHealth),
      checked_at: deps.now().toISOString(),
    }),
  )
  app.get(
    '/v1/tools/approvals',
    {
      ...auth.read('approvals:read'),
      schema: {
        summary: 'The organization’s pending approvals, newest first',
        description:
          'Each with its task’s job title and agent name in `lang`, else the member’s language, else Accept-Language’s.',
        tags,
        querystring: Type.Object({ ...PageQuery.properties, ...LangQuery().properties }),
        response: {
          200: Type.Object({
            approvals: Type.Array(Type.Object({ ...Approval.properties, ...TaskWords })),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => {
      const page = await deps.approvals.pending(orgOf(request), pageOf(request.query))
      const labels = await deps.tasks.labels(
        orgOf(request),
        page.approvals.map((a) => a.task_id),
        moneyLocaleOf(request),
      )
      return { ...page, approvals: page.approvals.map((a) => ({ ...a, ...labelOf(labels, a.task_id) })) }
    },
  )
  app.get(
    '/v1/audit',
    {
      ...auth.read('audit:read'),
      schema: {
        summary:
          'The organization’s audit record (who, what, when, from where, outcome), newest first, each entry hash-chained to the previous',
        tags,
        querystring: Type.Object(
          {
            type: Type.Optional(
              Type.String({ pattern: '^[a-z][a-z0-9_]{0,49}(\\.[a-z][a-z0-9_]{0,49}){1,3}$' }),
            ),
            actor: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
            outcome: Type.Optional(
              Type.Union([Type.Literal('ok'), Type.Literal('refused'), Type.Literal('failed')]),
            ),
            since: Type.Optional(DateTime),
            until: Type.Optional(DateTime),
            before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            entries: Type.Array(AuditEntry),
            next_before: Nullable(
              Type.Integer({ description: 'the `before` of the next page; null at the end' }),
            ),
          }),
        },
      },
    },
    async (request) => {
      const q = request.query
      finite('limit', q.limit)
      finite('before', q.before)
      const page = await deps.events.audit(orgOf(request), {
        ...(q.type ? { types: [q.type] } : {}),
        actorId: q.actor,
        outcome: q.outcome,
        ...periodOf(q),
        beforeSeq: q.before,
        limit: q.limit,
      })
      return {
        entries: page.map((e) => {
          const said = (e.data as { outcome?: unknown } | null)?.outcome
          // a change's own event is its outcome: it happened
          const outcome: 'ok' | 'refused' | 'failed' = said === 'refused' || said === 'failed' ? said : 'ok'
          return {
            id: e.id,
            seq: e.seq,
            at: e.created_at,
            type: e.type,
            who: { type: e.actor.type, id: e.actor.id },
            from: { ip: e.actor.ip, request_id: e.actor.request_id },
            outcome,
            subjects: e.subjects,
            data: e.data,
            chain: e.chain,
          }
        }),
        next_before: page.length === q.limit ? page[page.length - 1]!.seq : null,
      }
    },
  )
  app.get(
    '/v1/audit/verify',
    {
      ...auth.read('audit:read'),
      schema: {
        summary:
          'Walks the organization’s audit chain and answers whether it holds: an edited or removed entry is named',
        tags,
        response: { 200: ChainReport },
      },
    },
    async (request) => verifyWithAnchor(deps, orgOf(request)),
  )
}
