import { Type } from 'typebox'
import { AppError } from './errors.ts'

/** Every list's page: at most this many items. */
export const PAGE_LIMIT_MAX = 100
/** The page size when none is asked for. */
export const PAGE_LIMIT_DEFAULT = 50
/** The furthest offset a list pages to (past it, a cursor is the way). */
export const PAGE_OFFSET_MAX = 1_000_000

/**
 * The one page schema of every list route's querystring: `limit` (1..100, integer) and `offset`
 * (0..1,000,000, integer). Integers with a maximum: `1e309` (Infinity), `NaN` or `1.5` are 400,
 * never a number that reaches a query or a serializer. `limitDefault` exists only for the lists
 * published before this schema with another default (kept so their contract does not change);
 * a new list takes the default.
 */
export function pageQuery(options: { limitDefault?: number } = {}) {
  return Type.Object({
    limit: Type.Integer({
      minimum: 1,
      maximum: PAGE_LIMIT_MAX,
      default: options.limitDefault ?? PAGE_LIMIT_DEFAULT,
    }),
    offset: Type.Integer({ minimum: 0, maximum: PAGE_OFFSET_MAX, default: 0 }),
  })
}

export const PageQuery = pageQuery()

export interface Page {
  limit: number
  offset: number
}

/**
 * The page a validated querystring asks for. The schema's bounds do not hold for a value the
 * querystring coercion turns into Infinity (`limit=1e309`: Ajv skips its range checks for
 * non-finite numbers), so every list route takes its page through this: 400, never a number that
 * is not a safe integer reaching a query or a serializer.
 */
export function pageOf(query: Page): Page {
  for (const name of ['limit', 'offset'] as const)
    if (!Number.isSafeInteger(query[name]))
      throw new AppError(400, 'invalid_request', `querystring.${name} must be a finite integer`)
  return { limit: query.limit, offset: query.offset }
}
