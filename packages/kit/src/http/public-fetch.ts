import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { isIP } from 'node:net'
import { Agent, request } from 'undici'
import { addressRefusal, isPrivateAddress, refusalWords } from './addresses.ts'

/**
 * Outbound requests to URLs a client named (webhooks, JWKS, owner documents): only to public
 * addresses, unless the service allows private ones (development and tests against local servers).
 * A URL is checked when it is given (`checkPublicUrl`) and again when it is fetched: the connection
 * resolves the name itself and refuses a private answer (`publicAgent`), so a name that resolved to
 * a public address at the check and to 127.0.0.1 a moment later (DNS rebinding) reaches nothing.
 */

export { addressRefusal, embeddedV4, isMetadataAddress, isPrivateAddress } from './addresses.ts'

/** A URL refused: the message names why (for a 400 naming the field). */
export class PublicUrlError extends Error {
  override name = 'PublicUrlError'
}

export interface PublicUrlOptions {
  /** Private addresses and plain http allowed (development and tests only). */
  allowPrivate: boolean
  /** The resolver (tests give one); default the system's. */
  lookup?: typeof dnsLookup
}

const resolveAll = (host: string, lookup: typeof dnsLookup) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    lookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  )

/**
 * Checks a URL a client gives: absolute, https, no credentials, and a host that resolves only to
 * public addresses. With `allowPrivate` (development and tests against local servers): private
 * addresses pass, and plain http to a host that is one; a cloud metadata address never does (an
 * https name is not resolved then: the connection's resolver refuses a metadata answer). Throws a
 * `PublicUrlError` naming the reason; answers the parsed URL.
 */
export async function checkPublicUrl(url: string, options: PublicUrlOptions): Promise<URL> {
  const target = checkShape(url, options.allowPrivate)
  const host = bare(target.hostname)
  const http = target.protocol === 'http:'
  if (isIP(host)) {
    if (http && !isPrivateAddress(host)) throw new PublicUrlError(HTTP_ONLY_PRIVATE)
    return target
  }
  if (options.allowPrivate && !http) return target
  const addresses = await resolveChecked(host, options)
  if (http && addresses.some((a) => !isPrivateAddress(a.address))) throw new PublicUrlError(HTTP_ONLY_PRIVATE)
  return target
}

const HTTP_ONLY_PRIVATE = 'must be https (plain http only reaches a private address, in development)'
const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '')

/** The URL parsed, its scheme, credentials and (for an address literal) its address checked. */
function checkShape(url: string, allowPrivate: boolean): URL {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    throw new PublicUrlError('is not an absolute URL')
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(target.protocol)) throw new PublicUrlError('must be https')
  if (target.username || target.password) throw new PublicUrlError('must not carry credentials')
  const why = isIP(bare(target.hostname)) ? addressRefusal(target.hostname, allowPrivate) : null
  if (why) throw new PublicUrlError(`${target.hostname} is ${refusalWords(why)}`)
  return target
}

/** A name's addresses, every one of them allowed; throws `PublicUrlError` naming the first that is not. */
async function resolveChecked(host: string, options: PublicUrlOptions): Promise<LookupAddress[]> {
  const addresses = await resolveAll(host, options.lookup ?? dnsLookup).catch(() => {
    throw new PublicUrlError(`${host} does not resolve`)
  })
  if (!addresses.length) throw new PublicUrlError(`${host} does not resolve`)
  for (const { address } of addresses) {
    const why = addressRefusal(address, options.allowPrivate)
    if (why) throw new PublicUrlError(`${host} resolves to ${address}, ${refusalWords(why)}`)
  }
  return addresses
}

/**
 * The addresses a URL's host resolves to, each checked public (unless `allowPrivate`): what a
 * connection is then pinned to (`pinnedAgent`). Null for an address literal or when private
 * addresses are allowed (nothing to pin: the connection resolves through `guardedLookup`).
 * Throws `PublicUrlError`.
 */
export async function resolvePublic(url: string, options: PublicUrlOptions): Promise<LookupAddress[] | null> {
  if (options.allowPrivate) return (await checkPublicUrl(url, options), null)
  // the URL's shape checked here, its name resolved once below (the answer is what gets pinned)
  const host = bare(checkShape(url, false).hostname)
  return isIP(host) ? null : resolveChecked(host, options)
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

/**
 * The resolver a connection uses: the system's answer, refused when any address it gives is not
 * public (or, with `allowPrivate`, is a metadata address); the connection then goes to the address
 * checked here, never to a second answer.
 */
export function guardedLookup(lookup: typeof dnsLookup = dnsLookup, allowPrivate = false) {
  return (hostname: string, options: LookupOptions | number, callback: LookupCallback) => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {})
    lookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      const refused = addresses.find((a) => addressRefusal(a.address, allowPrivate))
      if (refused || !addresses.length) {
        const error: NodeJS.ErrnoException = new PublicUrlError(
          refused
            ? `${hostname} resolves to ${refused.address}, ${refusalWords(addressRefusal(refused.address, allowPrivate)!)}`
            : `${hostname} does not resolve`,
        )
        error.code = 'ENOTPUBLIC'
        return callback(error, [])
      }
      if (opts.all) return callback(null, addresses)
      const first = addresses[0]!
      callback(null, first.address, first.family)
    })
  }
}

/**
 * An undici dispatcher for client-named URLs: each connection resolves its host through
 * `guardedLookup` (an address literal in the URL is refused before connecting, by the caller's
 * `checkPublicUrl`). With `allowPrivate`, private answers pass but metadata ones still do not.
 */
export function publicAgent(options: PublicUrlOptions & { connectTimeoutMs?: number }): Agent {
  return new Agent({
    connect: {
      timeout: options.connectTimeoutMs ?? 10_000,
      lookup: guardedLookup(options.lookup, options.allowPrivate),
    },
    keepAliveTimeout: 4_000,
  })
}

/**
 * An undici dispatcher whose connections go to the addresses already checked for `host` (DNS
 * pinning: no second answer, so no rebinding window between the check and the connection); any
 * other host is refused. Close it after use.
 */
export function pinnedAgent(
  host: string,
  addresses: LookupAddress[],
  options: { connectTimeoutMs?: number } = {},
): Agent {
  const pinned = host.toLowerCase().replace(/^\[|\]$/g, '')
  const lookup = (hostname: string, opts: { all?: boolean } | number, callback: LookupCallback) => {
    if (hostname.toLowerCase() !== pinned || !addresses.length) {
      const error: NodeJS.ErrnoException = new PublicUrlError(`${hostname} is not the pinned host ${pinned}`)
      error.code = 'ENOTPUBLIC'
      return callback(error, [])
    }
    if (typeof opts === 'object' && opts?.all) return callback(null, addresses)
    callback(null, addresses[0]!.address, addresses[0]!.family)
  }
  return new Agent({
    connect: { timeout: options.connectTimeoutMs ?? 10_000, lookup },
    keepAliveTimeout: 1_000,
  })
}

export interface PostOutcome {
  /** The HTTP status, or null when no answer came (the error says why). */
  status: number | null
  durationMs: number
  /** Why the attempt failed (a non-2xx status, a refused address, a timeout…), or null on 2xx. */
  error: string | null
}

/**
 * POSTs `body` to a client-named URL through `agent` (`publicAgent`): the URL is checked again (a
 * literal private address refused), redirects are never followed (a 3xx is a failure, recorded),
 * the whole exchange is bounded by `timeoutMs`, and at most `maxAnswerBytes` of the answer are read.
 * Never throws: the outcome says what happened.
 */
export async function postToPublicUrl(
  url: string,
  init: {
    body: string
    headers: Record<string, string>
    agent: Agent
    allowPrivate: boolean
    timeoutMs?: number
    maxAnswerBytes?: number
  },
): Promise<PostOutcome> {
  const started = performance.now()
  const took = () => Math.round(performance.now() - started)
  try {
    // the shape and a literal address checked; names are checked by the agent's resolver at connect time
    const target = checkShape(url, init.allowPrivate)
    const res = await request(target, {
      method: 'POST',
      headers: init.headers,
      body: init.body,
      dispatcher: init.agent,
      signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
    })
    await drain(res.body, init.maxAnswerBytes ?? 64 * 1024)
    const status = res.statusCode
    const ok = status >= 200 && status < 300
    const error = ok
      ? null
      : status >= 300 && status < 400
        ? `answered ${status} (redirects are not followed)`
        : `answered ${status}`
    return { status, durationMs: took(), error }
  } catch (err) {
    return { status: null, durationMs: took(), error: describe(err) }
  }
}

/**
 * GETs (or, with `body`, POSTs to) a client-named URL through `agent` (`publicAgent`, which pins the checked address), bounded
 * in time and size. Redirects: none by default (a 3xx is answered as it is); with `maxRedirects`,
 * up to that many are followed, each `Location` checked as the first URL was (https, public). Throws
 * an `Error` naming what went wrong (a `PublicUrlError` for a URL refused).
 */
export async function getFromPublicUrl(
  url: string,
  init: {
    agent: Agent
    allowPrivate: boolean
    timeoutMs?: number
    maxBytes?: number
    maxRedirects?: number
    headers?: Record<string, string>
    /** A POST with this body instead of a GET (never redirected). */
    body?: string
  },
): Promise<{
  status: number
  text: string
  /** The answer's bytes, as read (`text` is them as UTF-8). */
  bytes: Buffer
  url: string
  location: string | null
  contentType: string | null
}> {
  let target = await checkPublicUrl(url, { allowPrivate: init.allowPrivate })
  const maxBytes = init.maxBytes ?? 256 * 1024
  // one deadline for the whole exchange, redirects included
  const signal = AbortSignal.timeout(init.timeoutMs ?? 5_000)
  for (let hops = 0; ; hops++) {
    let res: Awaited<ReturnType<typeof request>>
    try {
      res = await request(target, {
        method: init.body === undefined ? 'GET' : 'POST',
        dispatcher: init.agent,
        signal,
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body === undefined ? {} : { body: init.body }),
      })
    } catch (err) {
      throw new Error(`could not be fetched: ${describe(err)}`)
    }
    const location = res.headers.location
    if (
      res.statusCode >= 300 &&
      res.statusCode < 400 &&
      typeof location === 'string' &&
      init.maxRedirects &&
      init.body === undefined
    ) {
      await drain(res.body, 64 * 1024)
      if (hops >= init.maxRedirects) throw new Error(`redirected more than ${init.maxRedirects} times`)
      let next: string
      try {
        next = new URL(location, target).href
      } catch {
        throw new Error('redirected to a URL that does not parse')
      }
      target = await checkPublicUrl(next, { allowPrivate: init.allowPrivate })
      continue
    }
    const chunks: Buffer[] = []
    let read = 0
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        read += chunk.length
        if (read > maxBytes) {
          res.body.destroy()
          throw new Error(`answered more than ${maxBytes} bytes`)
        }
        chunks.push(chunk)
      }
    } catch (err) {
      throw new Error(
        read > maxBytes ? `answered more than ${maxBytes} bytes` : `could not be read: ${describe(err)}`,
      )
    }
    const type = res.headers['content-type']
    const bytes = Buffer.concat(chunks)
    return {
      status: res.statusCode,
      text: bytes.toString('utf8'),
      bytes,
      url: target.href,
      // a redirect not followed (no maxRedirects): where it points
      location: typeof location === 'string' ? location : null,
      contentType: typeof type === 'string' ? type : null,
    }
  }
}

async function drain(body: AsyncIterable<Buffer> & { destroy(): void }, max: number) {
  let read = 0
  for await (const chunk of body) {
    read += chunk.length
    if (read > max) {
      body.destroy()
      return
    }
  }
}

function describe(err: unknown): string {
  const e = err as { name?: string; message?: string; code?: string; cause?: unknown }
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out'
  if (e.cause) return describe(e.cause)
  const message = (e.message ?? String(err)).slice(0, 300)
  return e.code && !message.includes(e.code) ? `${e.code}: ${message}` : message
}
