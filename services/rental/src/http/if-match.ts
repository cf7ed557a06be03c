import { rentalError } from '../errors.ts'

/** `If-Match: "<version>"` as a number; 400 when malformed, undefined when absent. */
export function expectedVersion(header: string | undefined): number | undefined {
  if (header === undefined) return undefined
  const match = /^"(\d{1,9})"$/.exec(header.trim())
  if (!match) throw rentalError('invalid_request', 'If-Match must be the config version in quotes, like "3"')
  return Number(match[1])
}
