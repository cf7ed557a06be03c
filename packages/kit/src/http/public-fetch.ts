import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { Agent, request } from 'undici'

/**
 * Outbound requests to URLs a client named (webhooks, JWKS, owner documents): only to public
 * addresses, unless the service allows private ones (development and tests against local servers).
 * A URL is checked when it is given (`checkPublicUrl`) and again when it is fetched: the connection
 * resolves the name itself and refuses a private answer (`publicAgent`), so a name that resolved to
 * a public address at the check and to 127.0.0.1 a moment later (DNS rebinding) reaches nothing.
 */

/** Loopback, private, shared, link-local, documentation, benchmark, multicast, reserved, unspecified. */
const BLOCKED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]
const BLOCKED_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
]
const blocked = new BlockList()
for (const [net, prefix] of BLOCKED_V4) blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of BLOCKED_V6) blocked.addSubnet(net, prefix, 'ipv6')

/** The IPv4 address an IPv6 address carries (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`), if any. */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase()
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower)?.[1]
  if (dotted) return dotted
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower)
  if (!hex) return undefined
  const high = parseInt(hex[1]!, 16)
  const low = parseInt(hex[2]!, 16)
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** Whether an IP address is one a client's URL must not reach (a name is not an address: false). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '')
  const family = isIP(ip)
  if (family === 4) return blocked.check(ip, 'ipv4')
  if (family !== 6) return false
  const v4 = embeddedV4(ip)
  return v4 ? blocked.check(v4, 'ipv4') : blocked.check(ip, 'ipv6')
}

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
 * Checks a URL a client gives: absolute, https (http too when private addresses are allowed), no
 * credentials, and unless `allowPrivate` a host that resolves only to public addresses. Throws a
 * `PublicUrlError` naming the reason; answers the parsed URL.
 */
export async function checkPublicUrl(url: string, options: PublicUrlOptions): Promise<URL> {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    throw new PublicUrlError('is not an absolute URL')
  }
  const schemes = options.allowPrivate ? ['https:', 'http:'] : ['https:']
  if (!schemes.includes(target.protocol)) throw new PublicUrlError('must be https')
  if (target.username || target.password) throw new PublicUrlError('must not carry credentials')
  if (options.allowPrivate) return target
  const host = target.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new PublicUrlError(`${target.hostname} is not a public address`)
    return target
  }
  let addresses: LookupAddress[]
  try {
    addresses = await resolveAll(host, options.lookup ?? dnsLookup)
  } catch {
    throw new PublicUrlError(`${host} does not resolve`)
  }
  if (!addresses.length) throw new PublicUrlError(`${host} does not resolve`)
  if (addresses.some((a) => isPrivateAddress(a.address)))
    throw new PublicUrlError(`${host} is not a public address (it resolves to one that is not)`)
  return target
}

/**
 * The addresses a URL's host resolves to, each checked public (unless `allowPrivate`): what a
 * connection is then pinned to (`pinnedAgent`). Null for an address literal or when private
 * addresses are allowed (nothing to pin: the connection resolves as usual). Throws `PublicUrlError`.
 */
export async function resolvePublic(url: string, options: PublicUrlOptions): Promise<LookupAddress[] | null> {
  if (options.allowPrivate) return (await checkPublicUrl(url, options), null)
  // the URL's shape checked here, its name resolved once below (the answer is what gets pinned)
  const target = await checkPublicUrl(url, { ...options, allowPrivate: true })
  if (target.protocol !== 'https:') throw new PublicUrlError('must be https')
  const host = target.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new PublicUrlError(`${target.hostname} is not a public address`)
    return null
  }
  const addresses = await resolveAll(host, options.lookup ?? dnsLookup).catch(() => {
    throw new PublicUrlError(`${host} does not resolve`)
  })
  if (!addresses.length) throw new PublicUrlError(`${host} does not resolve`)
  const refused = addresses.find((a) => isPrivateAddress(a.address))
  if (refused) throw new PublicUrlError(`${host} resolves to ${refused.address}, not a public address`)
  return addresses
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

/**
 * The resolver a connection uses: the system's answer, refused when any address it gives is not
 * public; the connection then goes to the address checked here, never to a second answer.
 */
export function guardedLookup(lookup: typeof dnsLookup = dnsLookup) {
  return (
    hostname: string,
    options: { all?: boolean; family?: number } | number,
    callback: LookupCallback,
  ) => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {})
    lookup(hostname, { ...opts, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      const refused = addresses.find((a) => isPrivateAddress(a.address))
      if (refused || !addresses.length) {
        const error: NodeJS.ErrnoException = new PublicUrlError(
          refused
            ? `${hostname} resolves to ${refused.address}, not a public address`
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
 * An undici dispatcher for client-named URLs: unless `allowPrivate`, each connection resolves its
 * host through `guardedLookup` (and an address literal in the URL is refused before connecting).
 */
export function publicAgent(options: PublicUrlOptions & { connectTimeoutMs?: number }): Agent {
  return new Agent({
    connect: {
      timeout: options.connectTimeoutMs ?? 10_000,
      ...(options.allowPrivate ? {} : { lookup: guardedLookup(options.lookup) }),
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
    // the literal address check; names are checked by the agent's resolver at connect time
    const target = await checkPublicUrl(url, { allowPrivate: true })
    if (!init.allowPrivate && isPrivateAddress(target.hostname))
      return { status: null, durationMs: took(), error: `${target.hostname} is not a public address` }
    if (!init.allowPrivate && target.protocol !== 'https:')
      return { status: null, durationMs: took(), error: 'must be https' }
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
 * GETs a client-named URL through `agent` (`publicAgent`, which pins the checked address), bounded
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
  },
): Promise<{
  status: number
  text: string
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
        method: 'GET',
        dispatcher: init.agent,
        signal,
        ...(init.headers ? { headers: init.headers } : {}),
      })
    } catch (err) {
      throw new Error(`could not be fetched: ${describe(err)}`)
    }
    const location = res.headers.location
    if (res.statusCode >= 300 && res.statusCode < 400 && typeof location === 'string' && init.maxRedirects) {
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
    return {
      status: res.statusCode,
      text: Buffer.concat(chunks).toString('utf8'),
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
