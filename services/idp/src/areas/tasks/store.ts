import type { Generated } from 'kysely'
import type { Selectable } from 'kysely'
import type { IdpDb, IdpTables } from '../../db.ts'

/** The tables of the tasks area. */
export interface TasksTables {
  task_grants: {
    id: string
    user_id: string
    client_id: string
    purpose: string
    max_uses: number
    uses: Generated<number>
    ceiling: Record<string, unknown> | null
    resource: string | null
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
  }
}

export type TaskRow = Selectable<IdpTables['task_grants']>

export async function insertTask(
  db: IdpDb,
  row: Omit<IdpTables['task_grants'], 'uses' | 'created_at' | 'ended_at'>,
) {
  await db
    .insertInto('task_grants')
    .values({ ...row, ceiling: row.ceiling === null ? null : (JSON.stringify(row.ceiling) as never) })
    .execute()
}

/** Spends one use of a live grant and returns it, atomically: the last use goes to one request only. */
export async function spendUse(db: IdpDb, id: string) {
  return db
    .updateTable('task_grants')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('id', '=', id)
    .where('ended_at', 'is', null)
    .where('expires_at', '>', new Date())
    .whereRef('uses', '<', 'max_uses')
    .returningAll()
    .executeTakeFirst()
}

export async function taskById(db: IdpDb, id: string) {
  return db.selectFrom('task_grants').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The user's grants that can still issue a token, newest first, with their client's name. */
export async function liveTasksOf(db: IdpDb, userId: string) {
  return db
    .selectFrom('task_grants')
    .innerJoin('clients', 'clients.client_id', 'task_grants.client_id')
    .selectAll('task_grants')
    .select('clients.client_name')
    .where('task_grants.user_id', '=', userId)
    .where('task_grants.ended_at', 'is', null)
    .where('task_grants.expires_at', '>', new Date())
    .whereRef('task_grants.uses', '<', 'task_grants.max_uses')
    .orderBy('task_grants.created_at', 'desc')
    .execute()
}

/** Ends one of the user's grants; false when the user has no such live grant. */
export async function endTask(db: IdpDb, userId: string, id: string) {
  const ended = await db
    .updateTable('task_grants')
    .set({ ended_at: new Date() })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .executeTakeFirst()
  return ended.numUpdatedRows > 0n
}

export async function tasksOfUser(db: IdpDb, userId: string) {
  return db
    .selectFrom('task_grants')
    .select([
      'id',
      'client_id',
      'purpose',
      'max_uses',
      'uses',
      'ceiling',
      'resource',
      'created_at',
      'expires_at',
      'ended_at',
    ])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
}
