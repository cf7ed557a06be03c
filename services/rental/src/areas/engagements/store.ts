import { NEWEST_FIRST, pageOfRows, rowById } from '@svc/kit'
import { sql, type ColumnType, type Generated, type Insertable, type Selectable } from 'kysely'
import type { Json, RentalDb, RentalTables } from '../../db.ts'
import { type CatalogueNames, cardUrlColumn, catalogueNameColumns } from '../catalogue/index.ts'
import { limitedListingColumn } from '../market/index.ts'

/** The engagements area's tables: engagements, the escrows that pay for their tasks, and clients' revocations of agents. */
export interface EngagementTables {
  engagements: {
    id: string
    org_id: string
    client_did: string
    job_id: string
    agent_id: string
    agent_did: string
    provider_did: string
    price_fils: number
    currency: Generated<string>
    state: 'pending' | 'active' | 'ended'
    sla: Json
    sla_hash: string
    sla_signature: string | null
    created_at: Generated<Date>
    activated_at: Date | null
    ended_at: Generated<Date | null>
    end_answer: ColumnType<unknown, string | undefined, string>
    max_concurrent_tasks: number | null
    tasks_per_minute: number | null
    capacity_updated_at: Date | null
    agent_version: string | null
    /** What other areas add to its tasks' A2A message (message-parts.ts, migration 0056). */
    message_parts: Generated<string[]>
  }
  escrows: {
    id: string
    engagement_id: string
    org_id: string
    task_id: string | null
    amount_fils: number
    currency: Generated<string>
    body: Json
    hash: string
    state: 'offered' | 'open' | 'released' | 'returned' | 'withdrawn'
    signature: string | null
    open_transfer_id: string | null
    opened_at: Date | null
    fee_fils: number | null
    /** The VAT share posted to platform:vat at release (prices are VAT-inclusive); null: released before (none). */
    vat_fils: Generated<number | null>
    release_instruction: Json | null
    release_signature: string | null
    release_transfer_id: string | null
    release_receipt_id: string | null
    release_answer: Json | null
    released_at: Date | null
    return_transfer_id: Generated<string | null>
    returned_at: Generated<Date | null>
    created_at: Generated<Date>
  }
  engagement_config_versions: {
    engagement_id: string
    version: number
    org_id: string
    config: Json
    changes: Json
    actor: string
    created_at: Date
  }
  agent_revocations: {
    org_id: string
    agent_did: string
    reason: string
    revoked_at: Generated<Date>
  }
}

export type EngagementRow = Selectable<RentalTables['engagements']>
export type EscrowRow = Selectable<RentalTables['escrows']>

/** The client's engagement, or undefined (another client's is not found either). */
export const engagementOf = (db: RentalDb, orgId: string, id: string, lock = false) =>
  rowById(db, 'engagements', id, { match: { org_id: orgId }, lock })

/**
 * The engagement with its latest config version (undefined while the defaults apply), in one
 * statement; `orgId` scopes it to the client's, `lock` takes the engagement FOR UPDATE ('share':
 * FOR SHARE, which waits for and holds off every writer of the row, not other sharers).
 */
export async function engagementWithConfig(
  db: RentalDb,
  id: string,
  options: {
    orgId?: string | undefined
    lock?: boolean | 'share' | undefined
    /** Also whether the engagement's client revoked its agent (agent_revocations), in the same read. */
    revoked?: boolean | undefined
    /** Also its job's title and its agent's name (the catalogue's), in the same read. */
    names?: boolean | undefined
    /** Also the URL of its agent's A2A card (the catalogue's; null when not there), in the same read. */
    cardUrl?: boolean | undefined
    /** Also its agent's latest listing id when `limited` (the market's; null otherwise), in the same read. */
    listing?: boolean | undefined
  } = {},
) {
  let query = db
    .selectFrom('engagements as e')
    .leftJoinLateral(
      (eb) =>
        eb
          .selectFrom('engagement_config_versions as v')
          .select(['v.config', 'v.version', 'v.created_at'])
          .whereRef('v.engagement_id', '=', 'e.id')
          .orderBy('v.version', 'desc')
          .limit(1)
          .as('latest'),
      (join) => join.onTrue(),
    )
    .selectAll('e')
    .select([
      'latest.config as latest_config',
      'latest.version as latest_version',
      'latest.created_at as latest_created_at',
    ])
    .select((eb) =>
      options.revoked
        ? eb
            .exists(
              eb
                .selectFrom('agent_revocations as r')
                .select('r.agent_did')
                .whereRef('r.org_id', '=', 'e.org_id')
                .whereRef('r.agent_did', '=', 'e.agent_did'),
            )
            .as('agent_revoked')
        : sql<boolean>`false`.as('agent_revoked'),
    )
    .$if(options.names === true, (q) => q.select(catalogueNameColumns('e.job_id', 'e.agent_did')))
    .$if(options.cardUrl === true, (q) => q.select(cardUrlColumn('e.agent_did')))
    .$if(options.listing === true, (q) => q.select(limitedListingColumn('e.agent_did')))
    .where('e.id', '=', id)
  if (options.orgId !== undefined) query = query.where('e.org_id', '=', options.orgId)
  if (options.lock === 'share') query = query.forShare('e')
  else if (options.lock) query = query.forUpdate('e')
  const row = await query.executeTakeFirst()
  if (!row) return undefined
  const {
    latest_config,
    latest_version,
    latest_created_at,
    agent_revoked,
    job_title,
    job_title_ar,
    agent_name,
    agent_name_ar,
    card_url,
    limited_listing_id,
    ...engagement
  } = row
  const latest =
    latest_version === null
      ? undefined
      : { config: latest_config, version: latest_version, created_at: latest_created_at! }
  const names: CatalogueNames | undefined = options.names
    ? {
        job_title: job_title ?? null,
        job_title_ar: job_title_ar ?? null,
        agent_name: agent_name ?? null,
        agent_name_ar: agent_name_ar ?? null,
      }
    : undefined
  return {
    engagement: engagement as EngagementRow,
    latest,
    agentRevoked: Boolean(agent_revoked),
    names,
    ...(options.cardUrl ? { cardUrl: card_url ?? null } : {}),
    ...(options.listing ? { limitedListingId: limited_listing_id ?? null } : {}),
  }
}

export const insertConfigVersion = (
  trx: RentalDb,
  row: Insertable<RentalTables['engagement_config_versions']>,
) =>
  trx
    .insertInto('engagement_config_versions')
    .values(row)
    .returning(['version', 'created_at'])
    .executeTakeFirstOrThrow()

export const engagementsOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  pageOfRows(db, { table: 'engagements', owner: ['org_id', orgId], order: NEWEST_FIRST }, { limit, offset })

export async function insertEngagement(
  trx: RentalDb,
  row: Omit<Insertable<RentalTables['engagements']>, 'sla_signature' | 'activated_at'>,
) {
  await trx
    .insertInto('engagements')
    .values({ ...row, sla_signature: null, activated_at: null })
    .execute()
}

export async function activateEngagement(trx: RentalDb, id: string, signature: string, at: Date) {
  await trx
    .updateTable('engagements')
    .set({ state: 'active', sla_signature: signature, activated_at: at })
    .where('id', '=', id)
    .execute()
}

/** The ids of the agent's latest `limit` engagements that were activated, across all clients (insurance pricing). */
export const activatedIdsWithAgent = async (db: RentalDb, did: string, limit: number) =>
  (
    await db
      .selectFrom('engagements')
      .select('id')
      .where('agent_did', '=', did)
      .where('state', '!=', 'pending')
      .orderBy('created_at', 'desc')
      .limit(limit)
      .execute()
  ).map((r) => r.id)

/** The client's engagements with the agent, oldest first. */
export const engagementsWith = (db: RentalDb, orgId: string, did: string) =>
  db
    .selectFrom('engagements')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('agent_did', '=', did)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** The client DID of the client's latest engagement with the agent. */
export const latestClientDid = async (db: RentalDb, orgId: string, did: string) =>
  (
    await db
      .selectFrom('engagements')
      .select('client_did')
      .where('org_id', '=', orgId)
      .where('agent_did', '=', did)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst()
  )?.client_did

/** The client DID of the organization's latest engagement (the DID its receipts name), if any. */
export const latestClientDidOfOrg = async (db: RentalDb, orgId: string) =>
  (
    await db
      .selectFrom('engagements')
      .select('client_did')
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst()
  )?.client_did

/** The ids of the organization's engagements in one of `states`, oldest first. */
export const engagementIdsOf = async (db: RentalDb, orgId: string, states: readonly string[]) =>
  states.length === 0
    ? []
    : (
        await db
          .selectFrom('engagements')
          .select('id')
          .where('org_id', '=', orgId)
          .where('state', 'in', states as never[])
          .orderBy('created_at')
          .orderBy('id')
          .execute()
      ).map((r) => r.id)

/** The job of each of these engagements, by engagement id (any organization's: the caller's rows name them). */
export async function jobIdsOf(db: RentalDb, ids: readonly string[]) {
  if (ids.length === 0) return new Map<string, string>()
  const rows = await db
    .selectFrom('engagements')
    .select(['id', 'job_id'])
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, r.job_id]))
}
