import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { idpError } from './errors.ts'

/** Addresses a URL given by a client must not reach: loopback, private, link-local, shared, unspecified. */
const blocked = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6')

const isBlocked = (address: string) => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1]
  return mapped
    ? blocked.check(mapped, 'ipv4')
    : blocked.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')
}

/**
 * Fetches a URL a caller named (a JWKS, a domain's owner document): https only, to public
 * addresses only, with a timeout, a size cap and no redirects, unless `allowPrivate` (tests and
 * development against local servers: IDP_FETCH_ALLOW_PRIVATE). A refusal or a failure is a 400
 * naming what went wrong.
 */
export async function fetchPublic(
  url: string,
  {
    allowPrivate,
    timeoutMs = 5000,
    maxBytes = 256 * 1024,
  }: { allowPrivate: boolean; timeoutMs?: number; maxBytes?: number },
): Promise<unknown> {
  let target: URL
  try {
    target = new URL(url)
  } catch {
    throw idpError('invalid_request', `${url} is not a URL`)
  }
  if (!allowPrivate) {
    if (target.protocol !== 'https:') throw idpError('invalid_request', `${url} must be https`)
    const host = target.hostname.replace(/^\[|\]$/g, '')
    const addresses = isIP(host) ? [{ address: host }] : await lookup(host, { all: true }).catch(() => [])
    if (!addresses.length) throw idpError('invalid_request', `${target.hostname} does not resolve`)
    if (addresses.some((a) => isBlocked(a.address)))
      throw idpError('invalid_request', `${target.hostname} is not a public address`)
  }
  let res: Response
  try {
    res = await fetch(target, { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) })
  } catch (err) {
    throw idpError('invalid_request', `${url} could not be fetched: ${(err as Error).message}`)
  }
  if (!res.ok) {
    await res.body?.cancel()
    throw idpError('invalid_request', `${url} answered ${res.status}`)
  }
  const text = await res.text()
  if (text.length > maxBytes) throw idpError('invalid_request', `${url} answered more than ${maxBytes} bytes`)
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw idpError('invalid_request', `${url} did not answer JSON`)
  }
}
