/**
 * How every request leaves the SDK: an `Idempotency-Key` on every write (made here unless the
 * caller gave one), and the same request sent again with the same key when no answer came or the
 * answer says to (502, 503, 504, 409 `idempotency_key_in_flight`, 429). The rental answers a resent
 * write with its first answer, so a retried release pays once.
 */
export type Send = (request: Request) => Promise<Response>

export interface TransportOptions {
  /** Sends one request: a signed-in `Session.fetch`, or plain `fetch`. */
  send?: Send
  /** Headers on every request (a console session's `x-csrf-token`, for example). */
  headers?: Record<string, string>
  /** How many times a request is sent again (default 3). */
  retries?: number
  /** The first pause before sending again, doubled each time (default 200 ms). */
  retryDelayMs?: number
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const RETRY_STATUS = new Set([429, 502, 503, 504])

export const newIdempotencyKey = () => globalThis.crypto.randomUUID()

async function sendAgainFor(res: Response): Promise<boolean> {
  if (RETRY_STATUS.has(res.status)) return true
  if (res.status !== 409) return false
  const body = (await res
    .clone()
    .json()
    .catch(() => null)) as { error?: { code?: string } } | null
  return body?.error?.code === 'idempotency_key_in_flight'
}

export function transport(options: TransportOptions = {}): Send {
  const send: Send = options.send ?? ((request) => globalThis.fetch(request))
  const retries = options.retries ?? 3
  const delay = options.retryDelayMs ?? 200
  return async (request) => {
    const headers = new Headers(request.headers)
    for (const [name, value] of Object.entries(options.headers ?? {}))
      if (!headers.has(name)) headers.set(name, value)
    if (WRITES.has(request.method) && !headers.has('idempotency-key'))
      headers.set('idempotency-key', newIdempotencyKey())
    const body = request.body ? await request.arrayBuffer() : null
    const make = () =>
      new Request(request.url, { method: request.method, headers, body, signal: request.signal })
    for (let attempt = 0; ; attempt++) {
      let res: Response | undefined
      try {
        res = await send(make())
      } catch (err) {
        // no answer: a network failure (the write may or may not have happened: the key says which)
        const noAnswer = err instanceof TypeError || (err as { code?: unknown }).code === 'network_error'
        if (attempt >= retries || request.signal.aborted || !noAnswer) throw err
      }
      if (res && (attempt >= retries || !(await sendAgainFor(res)))) return res
      await new Promise((r) => setTimeout(r, delay * 2 ** attempt))
    }
  }
}
