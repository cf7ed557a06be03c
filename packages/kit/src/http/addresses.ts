import { BlockList, isIP } from 'node:net'

/**
 * Which IP addresses a URL a client named may reach. Every textual form is first brought to the
 * one a URL parser gives (`0177.0.0.1`, `127.1` and `2130706433` are 127.0.0.1; `[::ffff:127.0.0.1]`
 * is `::ffff:7f00:1`; uppercase, leading zeros and zone ids dropped), then an IPv6 address that
 * carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by that IPv4 address too.
 */

/** Loopback, private, shared, link-local, documentation, benchmark, multicast, reserved, unspecified. */
const PRIVATE_V4: Array<[string, number]> = [
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
const PRIVATE_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  // RFC 8215 local-use NAT64: its IPv4 part may sit anywhere past the prefix, so all of it is refused
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
]
/**
 * Cloud instance metadata services (AWS, GCP, Azure, OpenStack, Oracle: 169.254.169.254; AWS over
 * IPv6: fd00:ec2::254; Alibaba: 100.100.100.200; Oracle's older 192.0.0.192) and the link-local
 * ranges they live in: refused even where private addresses are allowed (development, tests).
 */
const METADATA_V4: Array<[string, number]> = [
  ['169.254.0.0', 16],
  ['100.100.100.200', 32],
  ['192.0.0.192', 32],
]
const METADATA_V6: Array<[string, number]> = [
  ['fd00:ec2::254', 128],
  ['fe80::', 10],
]

const listOf = (v4: Array<[string, number]>, v6: Array<[string, number]>) => {
  const list = new BlockList()
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4')
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6')
  return list
}
const privateList = listOf(PRIVATE_V4, PRIVATE_V6)
const metadataList = listOf(METADATA_V4, METADATA_V6)

/** The address in the form a URL parser gives it (no brackets, no zone id), or undefined for a name. */
export function canonicalAddress(address: string): { ip: string; family: 4 | 6 } | undefined {
  const bare = address
    .trim()
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '')
  if (!bare) return undefined
  let host: string
  try {
    host = new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname.replace(/^\[|\]$/g, '')
  } catch {
    return undefined
  }
  const family = isIP(host)
  return family === 4 || family === 6 ? { ip: host, family } : undefined
}

/** The eight 16-bit groups of a canonical IPv6 address (no dotted tail: the URL parser wrote it in hex). */
function groupsOf(ip: string): number[] {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined]
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const fill = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0')
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16))
}

const v4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.')

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-mapped `::ffff:0:0/96`, IPv4-translated
 * `::ffff:0:0:0/96`, IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16` (bits 16-47),
 * Teredo `2001::/32` (its server, bits 32-63, and its client, the inverted low 32 bits).
 */
export function embeddedV4(address: string): string[] {
  const canonical = canonicalAddress(address)
  if (canonical?.family !== 6) return []
  const g = groupsOf(canonical.ip)
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 5) && g[5] === 0xffff) return [v4Of(g[6]!, g[7]!)]
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return [v4Of(g[6]!, g[7]!)]
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return [v4Of(g[6]!, g[7]!)]
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [v4Of(g[6]!, g[7]!)]
  if (g[0] === 0x2002) return [v4Of(g[1]!, g[2]!)]
  if (g[0] === 0x2001 && g[1] === 0) return [v4Of(g[2]!, g[3]!), v4Of(g[6]! ^ 0xffff, g[7]! ^ 0xffff)]
  return []
}

function inList(list: BlockList, address: string): boolean {
  const canonical = canonicalAddress(address)
  if (!canonical) return false
  if (canonical.family === 4) return list.check(canonical.ip, 'ipv4')
  return list.check(canonical.ip, 'ipv6') || embeddedV4(canonical.ip).some((v4) => list.check(v4, 'ipv4'))
}

/** Whether an IP address is one a client's URL must not reach (a name is not an address: false). */
export const isPrivateAddress = (address: string): boolean => inList(privateList, address)

/** Whether an IP address is a cloud metadata service's (or in its link-local range): never reached. */
export const isMetadataAddress = (address: string): boolean => inList(metadataList, address)

/**
 * Why an address is refused, given whether private addresses are allowed: `metadata` always,
 * `private` unless allowed; null when it may be reached.
 */
export function addressRefusal(address: string, allowPrivate: boolean): 'metadata' | 'private' | null {
  if (isMetadataAddress(address)) return 'metadata'
  if (!allowPrivate && isPrivateAddress(address)) return 'private'
  return null
}

/** The words for a refusal: "not a public address", and what kind when it is a metadata one. */
export const refusalWords = (why: 'metadata' | 'private') =>
  why === 'metadata' ? 'not a public address (a cloud metadata or link-local one)' : 'not a public address'
