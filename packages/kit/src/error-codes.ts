import { AppError } from './errors.ts'

export interface ErrorCodeSpec {
  status: number
  /** Other statuses the same code is answered with (an upstream that failed, 502, or is not linked yet, 503). */
  also?: number[]
  /** When a client meets it, in a sentence: listed in the OpenAPI document. */
  description: string
}

export type ErrorCatalogue<T extends Record<string, ErrorCodeSpec>> = {
  readonly codes: T
  /** The error for a catalogued code, with its catalogued status. */
  error(code: keyof T & string, message: string, headers?: Record<string, string>): AppError
  /** The error for a catalogued code answered with one of its other catalogued statuses (`also`). */
  errorWith(status: number, code: keyof T & string, message: string): AppError
}

/**
 * A service's error codes as typed constants with their status, in one place: routes raise them by
 * name (`errors.error('engagement_not_active', '…')`), and the OpenAPI document lists them.
 */
export function errorCatalogue<const T extends Record<string, ErrorCodeSpec>>(codes: T): ErrorCatalogue<T> {
  for (const code of Object.keys(codes))
    if (!/^[a-z][a-z0-9_]*$/.test(code)) throw new Error(`error code ${code} is not snake_case`)
  return {
    codes,
    error: (code, message, headers = {}) => new AppError(codes[code]!.status, code, message, headers),
    errorWith: (status, code, message) => {
      if (status !== codes[code]!.status && !codes[code]!.also?.includes(status))
        throw new Error(`error code ${code} is not catalogued with status ${status}`)
      return new AppError(status, code, message)
    },
  }
}

/** The OpenAPI form of a catalogue: a string schema whose enum is the codes, each described with its status. */
export function errorCodeSchema(codes: Record<string, ErrorCodeSpec>) {
  const names = Object.keys(codes).sort()
  return {
    type: 'string' as const,
    enum: names,
    description: 'The `error.code` values this service answers, each with its HTTP status.',
    'x-error-codes': Object.fromEntries(names.map((n) => [n, codes[n]])),
  }
}
