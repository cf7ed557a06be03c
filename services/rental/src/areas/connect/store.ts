import { countedPageOfRows, rowById } from '@svc/kit'
import { type Generated, type Insertable, type Selectable, type Updateable, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import type { ToolInfo } from './mcp-client.ts'
import type { WebTables } from './web-store.ts'

export type ActionState =
  | 'pending_approval'
  | 'approved'
  | 'running'
  | 'completed'
  | 'failed'
  | 'timed_out'
  | 'refused'
  | 'rejected'
  | 'canceled'

/** api_key: the client's key, sealed; idp_resource: a token from the idp for the server's registered resource. */
export type AuthMode = 'api_key' | 'idp_resource'

export interface AllowedTool {
  name: string
  approval: 'never' | 'always'
}

/** The connect area's tables (migrations 0045 and 0049). */
export interface ConnectTables extends WebTables {
  connections: {
    id: string
    org_id: string
    engagement_id: string
    url: string
    auth_mode: AuthMode
    key_sealed: Buffer | null
    key_hint: string | null
    /** idp_resource: the RFC 8707 resource identifier the idp's tokens are asked for. */
    resource: string | null
    server_name: string | null
    server_version: string | null
    tools: ToolInfo[]
    allowed: AllowedTool[]
    calls: Generated<number>
    failures: Generated<number>
    last_success_at: Date | null
    last_error_at: Date | null
    last_error: string | null
    last_latency_ms: number | null
    created_by: string | null
    created_at: Date
  }
  connect_actions: {
    id: string
    org_id: string
    engagement_id: string
    connection_id: string
    task_id: string
    agent_did: string
    tool: string
    arguments: Record<string, unknown> | null
    arguments_sha256: string
    state: ActionState
    reason: string | null
    approval_id: string | null
    decided_by: string | null
    result: unknown
    result_sha256: string | null
    latency_ms: number | null
    attempts: Generated<number>
    requested_at: Date
    ended_at: Date | null
    receipt_id: string | null
    receipt_leaf_hash: string | null
  }
  connect_task_tokens: {
    token_sha256: string
    task_id: string
    org_id: string
    engagement_id: string
    expires_at: Date
  }
}

export type ConnectionRow = Selectable<ConnectTables['connections']>
export type ActionRow = Selectable<ConnectTables['connect_actions']>

const json = (value: unknown) => JSON.stringify(value)

export async function insertConnection(trx: RentalDb, row: Insertable<ConnectTables['connections']>) {
  // jsonb columns take their JSON text
  await trx
    .insertInto('connections')
    .values({ ...row, tools: json(row.tools) as never, allowed: json(row.allowed) as never })
    .execute()
}

export const connectionOf = (db: RentalDb, engagementId: string, lock = false) => {
  let query = db.selectFrom('connections').selectAll().where('engagement_id', '=', engagementId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const connectionById = (db: RentalDb, id: string) => rowById(db, 'connections', id)

export const connectionsOfOrg = (db: RentalDb, orgId: string) =>
  db.selectFrom('connections').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').execute()

export const deleteConnection = (trx: RentalDb, id: string) =>
  trx.deleteFrom('connections').where('id', '=', id).executeTakeFirst()

/** A call's outcome on the connection's health: counts, last success or error, latency. */
export async function noteHealth(
  trx: RentalDb,
  id: string,
  outcome: { ok: boolean; at: Date; latencyMs: number; error?: string },
) {
  await trx
    .updateTable('connections')
    .set((eb) => ({
      calls: eb('calls', '+', 1),
      ...(outcome.ok
        ? { last_success_at: outcome.at }
        : { failures: eb('failures', '+', 1), last_error_at: outcome.at, last_error: outcome.error ?? null }),
      last_latency_ms: outcome.latencyMs,
    }))
    .where('id', '=', id)
    .execute()
}

export async function insertAction(trx: RentalDb, row: Insertable<ConnectTables['connect_actions']>) {
  await trx
    .insertInto('connect_actions')
    .values({
      ...row,
      arguments: row.arguments === null ? null : (json(row.arguments) as never),
      result: row.result === undefined ? null : (json(row.result) as never),
    })
    .execute()
}

export async function updateAction(
  trx: RentalDb,
  id: string,
  set: Updateable<ConnectTables['connect_actions']>,
) {
  const values = { ...set }
  if (values.result !== undefined)
    values.result = values.result === null ? null : (json(values.result) as never)
  if (values.arguments !== undefined && values.arguments !== null)
    values.arguments = json(values.arguments) as never
  return trx.updateTable('connect_actions').set(values).where('id', '=', id).returningAll().executeTakeFirst()
}

export const actionOf = (db: RentalDb, orgId: string, id: string, lock = false) =>
  rowById(db, 'connect_actions', id, { match: { org_id: orgId }, lock })

export const actionById = (db: RentalDb, id: string, lock = false) =>
  rowById(db, 'connect_actions', id, { lock })

export async function actionsOf(
  db: RentalDb,
  engagementId: string,
  filter: { limit: number; offset: number; states?: ActionState[] | undefined },
) {
  const states = filter.states
  return countedPageOfRows(
    db,
    {
      table: 'connect_actions',
      owner: ['engagement_id', engagementId],
      where: (q) => (states ? q.where('state', 'in', states) : q),
      order: [
        ['requested_at', 'desc'],
        ['id', 'desc'],
      ],
    },
    filter,
  )
}

/** The engagement's actions not ended yet (held or approved), locked: a revoke ends them. */
export const openActionsOf = (trx: RentalDb, engagementId: string) =>
  trx
    .selectFrom('connect_actions')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .where('state', 'in', ['pending_approval', 'approved'])
    .forUpdate()
    .execute()

export async function insertTaskToken(
  db: RentalDb,
  row: Insertable<ConnectTables['connect_task_tokens']>,
  now: Date,
) {
  await db.insertInto('connect_task_tokens').values(row).execute()
  // expired credentials are dropped as new ones are made
  await db.deleteFrom('connect_task_tokens').where('expires_at', '<', now).execute()
}

export const taskTokenOf = (db: RentalDb, sha256: string) =>
  db.selectFrom('connect_task_tokens').selectAll().where('token_sha256', '=', sha256).executeTakeFirst()

/**
 * The organization's tool actions as executions (GET /v1/executions, with the tasks): newest first
 * by (requested_at, id), after the cursor when given, at most `limit`.
 */
export function actionExecutions(
  db: RentalDb,
  orgId: string,
  filter: {
    state?: string | undefined
    agentDid?: string | undefined
    engagementId?: string | undefined
    since?: Date | undefined
    until?: Date | undefined
  },
  after: [string, string] | undefined,
  limit: number,
) {
  let query = db
    .selectFrom('connect_actions')
    .select([
      sql<'tool_action'>`'tool_action'`.as('kind'),
      'id',
      'engagement_id',
      sql<string | null>`null::text`.as('trial_id'),
      'agent_did',
      'state',
      sql<number>`0::int8`.as('price_fils'),
      'reason as error',
      'receipt_id',
      'requested_at as created_at',
      sql<Date | null>`null::timestamptz`.as('started_at'),
      'ended_at as completed_at',
      sql<string>`requested_at::text`.as('created_text'),
      'tool',
      'task_id',
    ])
    .where('org_id', '=', orgId)
  if (filter.state) query = query.where('state', '=', filter.state as ActionState)
  if (filter.agentDid) query = query.where('agent_did', '=', filter.agentDid)
  if (filter.engagementId) query = query.where('engagement_id', '=', filter.engagementId)
  if (filter.since) query = query.where('requested_at', '>=', filter.since)
  if (filter.until) query = query.where('requested_at', '<', filter.until)
  if (after) query = query.where(sql<boolean>`(requested_at, id) < (${after[0]}::timestamptz, ${after[1]})`)
  return query.orderBy('requested_at', 'desc').orderBy('id', 'desc').limit(limit)
}
