import { sql, type Selectable } from 'kysely'
import type { RentalDb, RentalTables } from '../../db.ts'

export type TaskRow = Selectable<RentalTables['tasks']>

export const taskOf = (db: RentalDb, subject: string, id: string) =>
  db
    .selectFrom('tasks')
    .selectAll()
    .where('id', '=', id)
    .where('client_subject', '=', subject)
    .executeTakeFirst()

export const taskById = (db: RentalDb, id: string, lock = false) => {
  let query = db.selectFrom('tasks').selectAll().where('id', '=', id)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const tasksOf = (db: RentalDb, subject: string, limit: number, offset: number) =>
  db
    .selectFrom('tasks')
    .selectAll()
    .where('client_subject', '=', subject)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()

/** Appends a failed attempt to the task's `runs`: `{attempt, at, error}`, attempts counted from 1. */
export async function recordFailedRun(db: RentalDb, id: string, at: Date, error: string) {
  await db
    .updateTable('tasks')
    .set({
      runs: sql`coalesce(runs, '[]'::jsonb) || jsonb_build_array(jsonb_build_object(
        'attempt', coalesce(jsonb_array_length(runs), 0) + 1,
        'at', ${at.toISOString()}::text,
        'error', ${error.slice(0, 500)}::text))`,
    })
    .where('id', '=', id)
    .execute()
}

/** Removes the outputs whose time is up; the receipt and hashes stay. */
export async function purgeOutputs(db: RentalDb, now: Date, id?: string) {
  let query = db
    .updateTable('tasks')
    .set({ output: null, output_text: null, output_removed_at: now })
    .where('output_expires_at', '<=', now)
    .where('output_removed_at', 'is', null)
  if (id) query = query.where('id', '=', id)
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows)
}
