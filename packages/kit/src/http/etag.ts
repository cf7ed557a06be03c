import { createHash } from 'node:crypto'

/** A strong entity tag for a body as sent: its SHA-256, base64url, truncated (RFC 9110 §8.8.3). */
export const etagOf = (body: string) =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`

/**
 * RFC 9110 §13.1.2: whether If-None-Match matches the current tag (`*`, or one of a list, compared
 * weakly), in which case a GET answers 304.
 */
export function ifNoneMatch(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false
  const value = Array.isArray(header) ? header.join(',') : header
  if (value.trim() === '*') return true
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '')
  return value.split(',').some((tag) => opaque(tag) === opaque(etag))
}
