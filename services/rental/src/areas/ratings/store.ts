import type { Generated, Insertable, Selectable } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The ratings area's tables (migration 0031). */
export interface RatingTables {
  task_ratings: {
    id: string
    task_id: string
    org_id: string
    engagement_id: string
    agent_did: string
    score: number
    comment: string | null
    receipt_id: string
    receipt_leaf_hash: string
    edits: Generated<number>
    created_by: string | null
    created_at: Date
    updated_at: Date
  }
  engagement_references: {
    engagement_id: string
    org_id: string
    agent_did: string
    statement: string
    show_organization: boolean
    version: Generated<number>
    created_by: string | null
    created_at: Date
    updated_at: Date
  }
}

export type RatingRow = Selectable<RatingTables['task_ratings']>
export type ReferenceRow = Selectable<RatingTables['engagement_references']>

export const ratingOfTask = (db: RentalDb, taskId: string) =>
  db.selectFrom('task_ratings').selectAll().where('task_id', '=', taskId).executeTakeFirst()

/** The organization's ratings of its engagement's tasks, oldest first. */
export const ratingsOfEngagement = (db: RentalDb, orgId: string, engagementId: string) =>
  db
    .selectFrom('task_ratings')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('engagement_id', '=', engagementId)
    .orderBy('created_at')
    .orderBy('id')
    .execute()

/** Inserts the rating unless the task has one (the unique task_id): false when it had. */
export async function insertRating(trx: RentalDb, row: Insertable<RatingTables['task_ratings']>) {
  const result = await trx
    .insertInto('task_ratings')
    .values(row)
    .onConflict((oc) => oc.column('task_id').doNothing())
    .returning('id')
    .executeTakeFirst()
  return result !== undefined
}

export const editRating = (
  trx: RentalDb,
  id: string,
  change: { score: number; comment: string | null; updated_at: Date },
) =>
  trx
    .updateTable('task_ratings')
    .set((eb) => ({ ...change, edits: eb('edits', '+', 1) }))
    .where('id', '=', id)
    .execute()

/** The agent's count, sum and count of each score. */
export async function ratingSummary(db: RentalDb, agentDid: string) {
  const rows = await db
    .selectFrom('task_ratings')
    .select(['score', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('agent_did', '=', agentDid)
    .groupBy('score')
    .execute()
  return rows.map((r) => ({ score: Number(r.score), n: Number(r.n) }))
}

export const ratingsOfAgent = (db: RentalDb, agentDid: string, limit: number, offset: number) =>
  db
    .selectFrom('task_ratings')
    .select(['score', 'comment', 'receipt_leaf_hash', 'edits', 'created_at', 'updated_at'])
    .where('agent_did', '=', agentDid)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()

export const referenceOf = (db: RentalDb, engagementId: string) =>
  db
    .selectFrom('engagement_references')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .executeTakeFirst()

/** Publishes the engagement's reference, or replaces it (version + 1); `inserted` tells which. */
export async function upsertReference(trx: RentalDb, row: Insertable<RatingTables['engagement_references']>) {
  const existing = await referenceOf(trx, row.engagement_id)
  if (!existing) {
    await trx.insertInto('engagement_references').values(row).execute()
    return { inserted: true, previous: undefined }
  }
  await trx
    .updateTable('engagement_references')
    .set({
      statement: row.statement,
      show_organization: row.show_organization,
      version: existing.version + 1,
      updated_at: row.updated_at,
    })
    .where('engagement_id', '=', row.engagement_id)
    .execute()
  return { inserted: false, previous: existing }
}

export async function referencesOfAgent(db: RentalDb, agentDid: string, limit: number, offset: number) {
  const rows = await db
    .selectFrom('engagement_references')
    .selectAll()
    .where('agent_did', '=', agentDid)
    .orderBy('updated_at', 'desc')
    .orderBy('engagement_id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
  const count = await db
    .selectFrom('engagement_references')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('agent_did', '=', agentDid)
    .executeTakeFirstOrThrow()
  return { rows, total: Number(count.n) }
}

/** Erasure: the organization's rating comments replaced by `[erased]` (scores and receipts kept), its references deleted. */
export async function eraseOrg(trx: RentalDb, orgId: string) {
  const comments = await trx
    .updateTable('task_ratings')
    .set({ comment: ERASED })
    .where('org_id', '=', orgId)
    .where('comment', 'is not', null)
    .executeTakeFirst()
  const references = await trx
    .deleteFrom('engagement_references')
    .where('org_id', '=', orgId)
    .executeTakeFirst()
  return { comments: Number(comments.numUpdatedRows), references: Number(references.numDeletedRows) }
}

/** What erasure leaves in place of a text written by the erased party. */
export const ERASED = '[erased]'
