/**
 * The typed HTTP clients (openapi-fetch over the generated types): every route, parameter, body
 * and answer of the rental and the ledger as their OpenAPI documents publish them.
 */
import createClient from 'openapi-fetch'
import { SvcError } from './errors.ts'
import type { paths as LedgerPaths } from './generated/ledger.d.ts'
import type { paths as RentalPaths } from './generated/rental.d.ts'
import { type Send, transport, type TransportOptions } from './transport.ts'

export type { LedgerPaths, RentalPaths }
export type RentalApi = ReturnType<typeof createClient<RentalPaths>>
export type LedgerApi = ReturnType<typeof createClient<LedgerPaths>>

const base = (url: string) => url.replace(/\/+$/, '')

export function rentalApi(url: string, options: TransportOptions = {}): RentalApi {
  return createClient<RentalPaths>({ baseUrl: base(url), fetch: transport(options) })
}

/** The ledger is public: no token is sent to it. */
export function ledgerApi(url: string, options: { send?: Send } = {}): LedgerApi {
  return createClient<LedgerPaths>({ baseUrl: base(url), fetch: transport({ send: options.send }) })
}

/** The answer of an openapi-fetch call, or its SvcError (code, status, message) thrown. */
export async function ok<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<NonNullable<T>> {
  const { data, error, response } = await call
  if (response.ok && data !== undefined) return data as NonNullable<T>
  const body = (error ?? {}) as { error?: { code?: unknown; message?: unknown; request_id?: unknown } }
  const described = typeof body.error === 'object' ? body.error : undefined
  throw new SvcError(
    typeof described?.code === 'string' ? described.code : `http_${response.status}`,
    response.status,
    typeof described?.message === 'string' ? described.message : response.statusText,
    typeof described?.request_id === 'string'
      ? described.request_id
      : (response.headers.get('x-request-id') ?? undefined),
  )
}
