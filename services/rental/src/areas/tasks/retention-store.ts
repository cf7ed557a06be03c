/** What the tasks area deletes of its texts: the outputs' TTL, retention's policy, a client's erasure. */
import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/**
 * Retention: the organization's tasks ended before `before` that still hold a text (input, output),
 * outside `skipEngagements` (held), up to `limit`: their texts are removed (the hashes, receipt and
 * signed result stay). Answers their ids.
 */
export async function clearTexts(
  trx: RentalDb,
  orgId: string,
  before: Date,
  skipEngagements: readonly string[],
  limit: number,
  now: Date,
) {
  const skip = skipEngagements.length
    ? sql`and (engagement_id is null or engagement_id not in (${sql.join(skipEngagements)}))`
    : sql``
  const { rows } = await sql<{ id: string }>`
    update tasks set input_text = null, output = null, output_text = null,
      output_removed_at = coalesce(output_removed_at, ${now})
    where id in (
      select id from tasks
      where org_id = ${orgId} and completed_at < ${before}
        and state not in ('submitted', 'working', 'input-required')
        and (input_text is not null or output is not null or output_text is not null)
        ${skip}
      order by completed_at, id limit ${limit}
      for update skip locked)
    returning id`.execute(trx)
  return rows.map((r) => r.id)
}

/** Removes the outputs whose time is up, but those legal holds cover (`held`); the receipt and hashes stay. */
export async function purgeOutputs(
  db: RentalDb,
  now: Date,
  id?: string,
  held?: { orgs: string[]; engagements: string[] },
) {
  let query = db
    .updateTable('tasks')
    .set({ input_text: null, output: null, output_text: null, output_removed_at: now })
    .where('output_expires_at', '<=', now)
    .where('output_removed_at', 'is', null)
  if (id) query = query.where('id', '=', id)
  if (held?.orgs.length) query = query.where('org_id', 'not in', held.orgs)
  if (held?.engagements.length)
    query = query.where((eb) =>
      eb.or([eb('engagement_id', 'is', null), eb('engagement_id', 'not in', held.engagements)]),
    )
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Erasure: the texts and outputs of the organization's tasks wiped; their hashes and receipts stay. */
export async function eraseTexts(trx: RentalDb, orgId: string, at: Date): Promise<number> {
  const result = await trx
    .updateTable('tasks')
    .set({
      input_text: null,
      output: null,
      output_text: null,
      agent_result: null,
      error: null,
      runs: null,
      output_removed_at: at,
    })
    .where('org_id', '=', orgId)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}
