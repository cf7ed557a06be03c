import { fetch as undiciFetch, type RequestInit as UndiciInit } from 'undici'
import { checkPublicUrl, PublicUrlError, type PublicUrlOptions, publicAgent } from './public-fetch.ts'

/**
 * A `fetch` for libraries that take one (the A2A client) and call URLs a client named, or that a
 * document from such a URL named: each request, and each redirect, goes through the outbound guard
 * (`checkPublicUrl`: scheme, credentials, an address literal, a name's addresses), and its
 * connection through `publicAgent`, whose resolver refuses a private (or, with `allowPrivate`, a
 * metadata) answer, so the connection goes to the address checked. A refusal throws a
 * `PublicUrlError` naming the URL and why; no request is sent then.
 */
export interface GuardedFetch {
  fetch: typeof fetch
  /** Closes the connections kept open. */
  close(): Promise<void>
}

export interface GuardedFetchOptions extends PublicUrlOptions {
  connectTimeoutMs?: number
  /** The bound of a request that comes without a signal of its own; default 10 s. */
  timeoutMs?: number
  /** Redirects of a GET or HEAD followed, each checked as the first URL; default none. Others never. */
  maxRedirects?: number
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])

export function guardedFetch(options: GuardedFetchOptions): GuardedFetch {
  const agent = publicAgent(options)
  const rules = { allowPrivate: options.allowPrivate, ...(options.lookup ? { lookup: options.lookup } : {}) }
  const check = async (url: string) => {
    try {
      return await checkPublicUrl(url, rules)
    } catch (err) {
      if (err instanceof PublicUrlError)
        throw new PublicUrlError(`${url.slice(0, 200)} is refused: ${err.message}`)
      throw err
    }
  }
  const guarded = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const request = input instanceof Request ? input : undefined
    const given: RequestInit = request
      ? {
          method: request.method,
          headers: request.headers,
          body: request.body,
          signal: request.signal,
          ...init,
        }
      : init
    const method = (given.method ?? 'GET').toUpperCase()
    const follow = method === 'GET' || method === 'HEAD' ? (options.maxRedirects ?? 0) : 0
    const signal = given.signal ?? AbortSignal.timeout(options.timeoutMs ?? 10_000)
    let target = await check(request ? request.url : String(input))
    for (let hops = 0; ; hops++) {
      let res: Awaited<ReturnType<typeof undiciFetch>>
      try {
        res = await undiciFetch(target, {
          ...(given as UndiciInit),
          ...(given.body ? { duplex: 'half' } : {}),
          method,
          signal,
          redirect: 'manual',
          dispatcher: agent,
        })
      } catch (err) {
        // the connection's resolver refused the name's answer: said as the check says it
        const refused = refusalIn(err)
        if (refused) throw new PublicUrlError(`${target.href.slice(0, 200)} is refused: ${refused.message}`)
        throw err
      }
      const location = res.headers.get('location')
      if (!REDIRECTS.has(res.status) || location === null) return res as unknown as Response
      await res.body?.cancel().catch(() => undefined)
      if (hops >= follow)
        throw new PublicUrlError(
          follow
            ? `${target.href.slice(0, 200)} redirected more than ${follow} times`
            : `${target.href.slice(0, 200)} answered ${res.status} (a redirect is not followed)`,
        )
      let next: string
      try {
        next = new URL(location, target).href
      } catch {
        throw new PublicUrlError(`${target.href.slice(0, 200)} redirected to a URL that does not parse`)
      }
      target = await check(next)
    }
  }
  return { fetch: guarded as typeof fetch, close: () => agent.close() }
}

function refusalIn(err: unknown): PublicUrlError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof PublicUrlError) return e
  return undefined
}
