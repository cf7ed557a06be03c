import { type Expression, type Kysely, sql } from 'kysely'

/**
 * A read an area owns, to run inside a statement another area composes (`readParts`): its select,
 * and how to read its rows, which arrive as JSON (times as ISO text, numbers as numbers).
 */
export interface QueryPart<T> {
  query: Expression<unknown>
  read(rows: Array<Record<string, unknown>>): T
}

type Results<P> = { [K in keyof P]: P[K] extends QueryPart<infer T> ? T : never }

/**
 * Several areas' reads in one statement (one round trip, one snapshot): each part's rows are
 * aggregated as a JSON array in a column of the one row, in the order its select gives them.
 */
export async function readParts<P extends Record<string, QueryPart<unknown>>>(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the parts name any service's tables
  db: Kysely<any>,
  parts: P,
): Promise<Results<P>> {
  const names = Object.keys(parts)
  const columns = names.map(
    (name) =>
      sql`(select coalesce(json_agg(p), '[]'::json) from (${parts[name]!.query}) as p) as ${sql.id(name)}`,
  )
  const { rows } = await sql<Record<string, unknown>>`select ${sql.join(columns)}`.execute(db)
  const row = rows[0]!
  const results: Record<string, unknown> = {}
  for (const name of names) {
    const value = row[name]
    const json = (typeof value === 'string' ? JSON.parse(value) : value) as Array<Record<string, unknown>>
    results[name] = parts[name]!.read(json)
  }
  return results as Results<P>
}
