import type { Kysely, Selectable, SelectQueryBuilder, Transaction } from 'kysely'
import type { Page } from './page.ts'

/** A list's order, column by column; it ends with a unique column so that ties keep one order across pages. */
export type RowOrder<Column extends string> = ReadonlyArray<readonly [Column, 'asc' | 'desc']>

/** The usual list order: newest first, the id breaking ties. */
export const NEWEST_FIRST = [
  ['created_at', 'desc'],
  ['id', 'desc'],
] as const

/** Oldest first, the id breaking ties. */
export const OLDEST_FIRST = [
  ['created_at', 'asc'],
  ['id', 'asc'],
] as const

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- what kysely's selectFrom starts from: nothing selected yet
type From<DB, T extends keyof DB & string> = SelectQueryBuilder<DB, T, {}>

/** Whose rows a list shows: the owner's column (usually `org_id`) and value, narrowed further by `where`. */
export interface OwnedRows<DB, T extends keyof DB & string> {
  table: T
  owner: readonly [column: keyof DB[T] & string, value: string]
  order: RowOrder<keyof DB[T] & string>
  /** More conditions (a state, an engagement), applied to the page and to its total alike. */
  where?: (query: From<DB, T>) => From<DB, T>
}

// kysely cannot resolve a table named by a type parameter: the query is built untyped, its rows typed by the table
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Untyped = SelectQueryBuilder<any, any, any>

function owned<DB, T extends keyof DB & string>(db: Kysely<DB>, rows: OwnedRows<DB, T>): Untyped {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const untyped = db as unknown as Kysely<any>
  const base: Untyped = untyped
    .selectFrom(rows.table as string)
    .where(rows.owner[0] as string, '=', rows.owner[1])
  return rows.where ? (rows.where(base as From<DB, T>) as Untyped) : base
}

/**
 * "The organization's rows, newest first, paged": every column of the owner's rows in `order`,
 * `page.limit` of them from `page.offset` (`SELECT * … WHERE owner = $1 [AND …] ORDER BY … LIMIT … OFFSET …`).
 */
export function pageOfRows<DB, T extends keyof DB & string>(
  db: Kysely<DB> | Transaction<DB>,
  rows: OwnedRows<NoInfer<DB>, T>,
  page: Page,
): Promise<Array<Selectable<DB[T]>>> {
  let query = owned(db, rows).selectAll()
  for (const [column, direction] of rows.order) query = query.orderBy(column, direction)
  return query.limit(page.limit).offset(page.offset).execute() as Promise<Array<Selectable<DB[T]>>>
}

/** A page of the owner's rows (as `pageOfRows`) and how many rows there are in all. */
export async function countedPageOfRows<DB, T extends keyof DB & string>(
  db: Kysely<DB> | Transaction<DB>,
  rows: OwnedRows<NoInfer<DB>, T>,
  page: Page,
): Promise<{ rows: Array<Selectable<DB[T]>>; total: number }> {
  const found = await pageOfRows(db, rows, page)
  const { n } = (await owned(db, rows)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow()) as { n: string | number | bigint }
  return { rows: found, total: Number(n) }
}
