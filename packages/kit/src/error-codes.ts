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
 * The codes the kit's HTTP layer answers on any route of an `api`-shaped service: each such
 * service spreads them into its catalogue (overriding a description where its routes say more).
 */
export const httpErrorCodes = {
  invalid_request: { status: 400, description: 'a parameter or body field is malformed or out of range' },
  invalid_json: { status: 400, description: 'the body is not JSON' },
  not_found: { status: 404, description: 'no such route' },
  method_not_allowed: { status: 405, description: 'the route does not take this method' },
  request_timeout: { status: 408, description: 'the request did not arrive whole in time' },
  payload_too_large: { status: 413, description: 'the body is larger than the service takes' },
  uri_too_long: { status: 414, description: 'the request path is longer than the service takes' },
  unsupported_media_type: { status: 415, description: 'the body has a content type the route does not take' },
  expectation_failed: {
    status: 417,
    description: 'the request’s Expect header asks for what the server does not do',
  },
  headers_too_large: {
    status: 431,
    description: 'the request line and headers are larger than 16 KB in all',
  },
  http_version_not_supported: { status: 505, description: 'the request is not HTTP/1.0 or HTTP/1.1' },
  shutting_down: { status: 503, description: 'the instance is shutting down: try again' },
  unavailable: { status: 503, description: 'the database did not answer in time: try again (Retry-After)' },
} as const satisfies Record<string, ErrorCodeSpec>

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
