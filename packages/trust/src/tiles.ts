import type { Hash, NodeId } from './merkle.ts'

/** C2SP tlog-tiles (https://c2sp.org/tlog-tiles): tiles of height 8, 256 hashes when full. */
export const TILE_HEIGHT = 8
export const TILE_WIDTH = 256

const MAX_LEVEL = 63
const HASH_SIZE = 32

/** "tile/<L>/<N>[.p/<W>]", N in zero-padded 3-digit groups, all but the last prefixed with x (1234067 -> x001/x234/067). A width of 256 (or none) names the full tile. */
export function tilePath(level: number, index: number, width?: number): string {
  if (!Number.isInteger(level) || level < 0 || level > MAX_LEVEL) {
    throw new RangeError(`tile level must be an integer 0..${MAX_LEVEL}, got ${level}`)
  }
  return `tile/${level}/${encodeIndex(index)}${widthSuffix(width)}`
}

/** "tile/entries/<N>[.p/<W>]" */
export function entriesPath(index: number, width?: number): string {
  return `tile/entries/${encodeIndex(index)}${widthSuffix(width)}`
}

export interface TilePath {
  kind: 'hash' | 'entries'
  level: number
  index: number
  width?: number
}

const PATH = /^tile\/(entries|[0-9]+)\/((?:x[0-9]{3}\/)*[0-9]{3})(?:\.p\/([0-9]+))?$/

/**
 * Parses either form (relative to the log prefix, no leading slash). Only the canonical spelling is
 * accepted (no extra leading zeros or groups, L <= 63, W in 1..255); null otherwise. Entry bundles
 * report level 0, the level of the hash tiles they match.
 */
export function parseTilePath(path: string): TilePath | null {
  const m = PATH.exec(path)
  if (m === null) return null
  const levelText = m[1]!
  const indexText = m[2]!
  const widthText = m[3]
  const kind = levelText === 'entries' ? 'entries' : 'hash'
  const level = kind === 'entries' ? 0 : Number(levelText)
  const index = Number(indexText.replaceAll('x', '').replaceAll('/', ''))
  const width = widthText === undefined ? undefined : Number(widthText)
  if (!Number.isSafeInteger(index) || level > MAX_LEVEL) return null
  if (width !== undefined && (width < 1 || width >= TILE_WIDTH)) return null
  const canonical = kind === 'entries' ? entriesPath(index, width) : tilePath(level, index, width)
  if (canonical !== path) return null
  return width === undefined ? { kind, level, index } : { kind, level, index, width }
}

/** The stored nodes whose hashes hash tile (level, index) holds, in order: tree level level*8, nodes index*256 .. index*256 + width - 1. */
export function tileNodes(level: number, index: number, width: number): NodeId[] {
  checkTile(level, index)
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH) {
    throw new RangeError(`tile width must be 1..${TILE_WIDTH}, got ${width}`)
  }
  const first = index * TILE_WIDTH
  if (!Number.isSafeInteger(first + width - 1)) throw new RangeError(`tile index ${index} is too large`)
  return Array.from({ length: width }, (_, i) => ({ level: level * TILE_HEIGHT, index: first + i }))
}

/** For a tree of `size` leaves: the width of tile (level, index), 0 when the tile does not exist yet, 256 when full. */
export function tileWidth(level: number, index: number, size: number): number {
  checkTile(level, index)
  if (!Number.isSafeInteger(size) || size < 0)
    throw new RangeError(`size must be a non-negative safe integer`)
  // The tile holds the complete subtrees of 256^level leaves; there are floor(size / 256^level) of them.
  const nodes = Math.floor(size / TILE_WIDTH ** level)
  return Math.min(TILE_WIDTH, Math.max(0, nodes - index * TILE_WIDTH))
}

/** A hash tile's bytes: its hashes concatenated. */
export function encodeHashTile(hashes: Hash[]): Uint8Array {
  if (hashes.length < 1 || hashes.length > TILE_WIDTH) throw new RangeError('a tile holds 1..256 hashes')
  const out = new Uint8Array(hashes.length * HASH_SIZE)
  hashes.forEach((h, i) => {
    if (h.length !== HASH_SIZE) throw new RangeError(`hashes[${i}] is not 32 bytes`)
    out.set(h, i * HASH_SIZE)
  })
  return out
}

/** The hashes of a tile's bytes; throws unless it is 1..256 whole hashes. */
export function decodeHashTile(tile: Uint8Array): Hash[] {
  const count = tile.length / HASH_SIZE
  if (!Number.isInteger(count) || count < 1 || count > TILE_WIDTH) {
    throw new Error(`a hash tile is 1..256 hashes of 32 bytes, got ${tile.length} bytes`)
  }
  return Array.from({ length: count }, (_, i) => tile.slice(i * HASH_SIZE, (i + 1) * HASH_SIZE))
}

/** Entry bundles: each entry as a big-endian uint16 length followed by the bytes (tlog-tiles "entries" format). */
export function encodeEntryBundle(entries: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(entries.reduce((n, e) => n + 2 + e.length, 0))
  let at = 0
  entries.forEach((entry, i) => {
    if (entry.length > 0xffff) throw new RangeError(`entries[${i}] is longer than 65535 bytes`)
    out[at] = entry.length >> 8
    out[at + 1] = entry.length & 0xff
    out.set(entry, at + 2)
    at += 2 + entry.length
  })
  return out
}

/** Strict inverse of encodeEntryBundle: throws when a length prefix or an entry is cut short. */
export function decodeEntryBundle(bundle: Uint8Array): Uint8Array[] {
  const entries: Uint8Array[] = []
  let at = 0
  while (at < bundle.length) {
    if (at + 2 > bundle.length) throw new Error(`entry bundle truncated in a length prefix at byte ${at}`)
    const length = (bundle[at]! << 8) | bundle[at + 1]!
    if (at + 2 + length > bundle.length) throw new Error(`entry bundle truncated in the entry at byte ${at}`)
    entries.push(bundle.slice(at + 2, at + 2 + length))
    at += 2 + length
  }
  return entries
}

function encodeIndex(index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`tile index must be a non-negative safe integer, got ${index}`)
  }
  const digits = String(index).padStart(3 * Math.ceil(String(index).length / 3), '0')
  const groups = digits.match(/[0-9]{3}/g)!
  return groups.map((g, i) => (i < groups.length - 1 ? `x${g}` : g)).join('/')
}

function widthSuffix(width: number | undefined): string {
  if (width === undefined || width === TILE_WIDTH) return ''
  if (!Number.isInteger(width) || width < 1 || width > TILE_WIDTH) {
    throw new RangeError(`tile width must be 1..${TILE_WIDTH}, got ${width}`)
  }
  return `.p/${width}`
}

function checkTile(level: number, index: number): void {
  if (!Number.isInteger(level) || level < 0 || level > MAX_LEVEL) {
    throw new RangeError(`tile level must be an integer 0..${MAX_LEVEL}, got ${level}`)
  }
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new RangeError(`tile index must be a non-negative safe integer, got ${index}`)
  }
}
