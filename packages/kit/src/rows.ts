import type { Kysely, Selectable, Transaction } from 'kysely'

/**
 * One row of `table` by its `id`, only when the columns of `match` hold the given values (the
 * owner: `{ client_subject: subject }`), else undefined: another owner's row is not found either,
 * so a route answers 404 for it as for a missing one. `lock` takes it FOR UPDATE (in a transaction).
 */
export function rowById<DB, T extends keyof DB & string>(
  db: Kysely<DB> | Transaction<DB>,
  table: T,
  id: string,
  options: { match?: Partial<Record<keyof DB[T] & string, string>>; lock?: boolean } = {},
): Promise<Selectable<DB[T]> | undefined> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table and columns named at run time; the result is typed by the caller's table
  let query = (db as Kysely<any>).selectFrom(table).selectAll().where('id', '=', id)
  for (const [column, value] of Object.entries(options.match ?? {}))
    query = query.where(column, '=', value as string)
  if (options.lock) query = query.forUpdate()
  return query.executeTakeFirst() as Promise<Selectable<DB[T]> | undefined>
}
