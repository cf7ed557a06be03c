import type { Json, RentalDb } from '../../db.ts'

/** The erasure area's table: one row per erased organization, with the answer it gave. */
export interface ErasureTables {
  client_erasures: {
    org_id: string
    by_session_hash: Buffer
    answer: Json
    erased_at: Date
  }
}

/** The erasure an eraser's session made, or that of the organization (a racing call's). */
export async function erasureOf(db: RentalDb, by: { orgId?: string; sessionHash?: Buffer }) {
  let query = db.selectFrom('client_erasures').select(['org_id', 'answer'])
  if (by.orgId) query = query.where('org_id', '=', by.orgId)
  if (by.sessionHash) query = query.where('by_session_hash', '=', by.sessionHash)
  const row = await query.orderBy('erased_at', 'desc').limit(1).executeTakeFirst()
  return row?.answer as ErasureAnswer | undefined
}

export async function insertErasure(
  trx: RentalDb,
  row: { orgId: string; sessionHash: Buffer; answer: ErasureAnswer; at: Date },
) {
  await trx
    .insertInto('client_erasures')
    .values({
      org_id: row.orgId,
      by_session_hash: row.sessionHash,
      answer: JSON.stringify(row.answer),
      erased_at: row.at,
    })
    .execute()
}

export interface ErasureAnswer {
  org_id: string
  state: 'erased'
  erased_at: string
  engagements_ended: Array<{ engagement_id: string; returned_fils: number; receipt_id: string }>
  deleted: {
    members: number
    sessions: number
    api_tokens: number
    webhooks: number
    exports?: number
    files: number
    file_bytes: number
    task_texts: number
    rating_comments: number
    references: number
    incident_texts: number
    incident_notes: number
    dispute_reasons: number
    events_pseudonymised: number
  }
  kept: string[]
  receipt: { id: string; leaf_hash: string }
}
