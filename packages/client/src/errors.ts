import type { components } from './generated/rental.d.ts'

/** Every error code the rental publishes (its OpenAPI document's `ErrorCode`). */
export type RentalErrorCode = components['schemas']['ErrorCode']

/**
 * An answer that is not a success, as the service named it: the published `code` (a rental
 * `ErrorCode`, a ledger code, or an OAuth error such as `access_denied`), the HTTP status and the
 * service's message. `status` is 0 when no answer came (the network, a timeout).
 */
export class SvcError extends Error {
  override readonly name = 'SvcError'
  constructor(
    readonly code: RentalErrorCode | (string & {}),
    readonly status: number,
    message: string,
    readonly requestId?: string,
  ) {
    super(message)
  }

  /** Narrows to one published code: `if (err.is('insufficient_funds'))`. */
  is(code: RentalErrorCode | (string & {})): boolean {
    return this.code === code
  }
}

/** The SvcError of an answer of the rental or the ledger (`{"error": {"code", "message"}}`). */
export async function errorOf(res: Response): Promise<SvcError> {
  const text = await res.text().catch(() => '')
  let error: { code?: unknown; message?: unknown; request_id?: unknown } | undefined
  try {
    const parsed = JSON.parse(text) as { error?: unknown }
    if (parsed.error && typeof parsed.error === 'object') error = parsed.error as typeof error
  } catch {}
  const requestId =
    typeof error?.request_id === 'string' ? error.request_id : (res.headers.get('x-request-id') ?? undefined)
  return new SvcError(
    typeof error?.code === 'string' ? error.code : `http_${res.status}`,
    res.status,
    typeof error?.message === 'string' ? error.message : text.slice(0, 200) || res.statusText,
    requestId,
  )
}
