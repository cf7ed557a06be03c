import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type ExecutionFilter, executionRows, type ExecutionSource } from './execution-store.ts'

export type { ExecutionFilter, ExecutionRow, ExecutionSource } from './execution-store.ts'
export { usageSince } from './execution-store.ts'

/** Where the next page starts: the last row's creation time (as PostgreSQL writes it, to the microsecond) and id. */
const encodeCursor = (createdAt: string, id: string) =>
  Buffer.from(JSON.stringify([createdAt, id]), 'utf8').toString('base64url')

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string' &&
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,6})?[+-]\d{2}(:\d{2})?$/.test(value[0]) &&
      value[1].length <= 100
    )
      return [value[0], value[1]]
  } catch {
    // not JSON: answered below
  }
  throw rentalError('invalid_request', 'querystring.cursor is not a cursor this list gave')
}

/**
 * A page of the organization's executions (its tasks, and the `also` sources' rows: tool actions),
 * newest first across all, by keyset (creation time, id): each source gives its first `limit + 1`
 * rows after the cursor, one UNION ALL orders them, so a page is the same however many are created
 * meanwhile, and `next_cursor` is null at the end.
 */
export async function executionPage(
  db: RentalDb,
  orgId: string,
  filter: ExecutionFilter,
  page: { limit: number; cursor?: string | undefined },
  also: ExecutionSource[] = [],
) {
  const after = page.cursor ? decodeCursor(page.cursor) : undefined
  const rows = await executionRows(db, orgId, filter, after, page.limit + 1, also)
  const more = rows.length > page.limit
  const shown = rows.slice(0, page.limit)
  const last = shown[shown.length - 1]
  return {
    rows: shown,
    nextCursor: more && last ? encodeCursor(last.created_text, last.id) : null,
  }
}
