import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import { leafHash, rootFromLeafHashes, type Hash } from './merkle.ts'
import { MemoryLog } from './merkle.testkit.ts'
import {
  TILE_HEIGHT,
  TILE_WIDTH,
  decodeEntryBundle,
  decodeHashTile,
  encodeEntryBundle,
  encodeHashTile,
  entriesPath,
  parseTilePath,
  tileNodes,
  tilePath,
  tileWidth,
  type TilePath,
} from './tiles.ts'

interface Vectors {
  c2spIndexEncoding: Array<{ index: number; encoded: string; text: string }>
  c2spWidths: Array<{
    text: string
    size: number
    tiles: Array<{ level: number; index: number; width: number }>
  }>
  goPaths: Array<{ go: string; path: string; tile: TilePath | null }>
}
const vectors = JSON.parse(
  readFileSync(new URL('../testdata/tiles/paths.json', import.meta.url), 'utf8'),
) as Vectors

describe('tile paths (C2SP tlog-tiles)', () => {
  for (const v of vectors.c2spIndexEncoding) {
    test(`spec: ${v.text}`, () => {
      assert.equal(tilePath(0, v.index), `tile/0/${v.encoded}`)
      assert.equal(entriesPath(v.index), `tile/entries/${v.encoded}`)
      assert.deepEqual(parseTilePath(`tile/3/${v.encoded}`), { kind: 'hash', level: 3, index: v.index })
    })
  }

  for (const v of vectors.goPaths) {
    test(`golang.org/x/mod/sumdb/tlog ${v.go} as ${v.path} ${v.tile ? 'round-trips' : 'is rejected'}`, () => {
      assert.deepEqual(parseTilePath(v.path), v.tile)
      if (v.tile === null) return
      const { kind, level, index, width } = v.tile
      assert.equal(kind === 'entries' ? entriesPath(index, width) : tilePath(level, index, width), v.path)
    })
  }

  test('encodes small and large indexes in 3-digit groups', () => {
    assert.equal(tilePath(0, 0), 'tile/0/000')
    assert.equal(tilePath(1, 999), 'tile/1/999')
    assert.equal(tilePath(1, 1000), 'tile/1/x001/000')
    assert.equal(tilePath(2, 5, 255), 'tile/2/005.p/255')
    assert.equal(tilePath(2, 5, 256), 'tile/2/005')
    assert.equal(entriesPath(Number.MAX_SAFE_INTEGER, 1), 'tile/entries/x009/x007/x199/x254/x740/991.p/1')
  })

  test('parses only canonical paths', () => {
    for (const bad of [
      'tile/0/x000/001', // a leading zero group
      'tile/0/01',
      'tile/0/0001',
      'tile/0/x001', // the last group has no x
      'tile/00/001',
      'tile/64/000',
      'tile/0/000.p/0',
      'tile/0/000.p/256',
      'tile/0/000.p/07',
      'tile/0/000.p/',
      'tile/entries/000.p/256',
      'tile/data/000',
      '/tile/0/000',
      'tile/0/000/',
      'tile/0/x010/x000/x000/x000/x000/x000/000', // beyond 2^53
    ]) {
      assert.equal(parseTilePath(bad), null, bad)
    }
    assert.deepEqual(parseTilePath('tile/63/000.p/1'), { kind: 'hash', level: 63, index: 0, width: 1 })
    assert.deepEqual(parseTilePath('tile/entries/x001/000.p/9'), {
      kind: 'entries',
      level: 0,
      index: 1000,
      width: 9,
    })
  })

  test('refuses to build paths from out-of-range numbers', () => {
    assert.throws(() => tilePath(64, 0), RangeError)
    assert.throws(() => tilePath(0, -1), RangeError)
    assert.throws(() => tilePath(0, 0, 0), RangeError)
    assert.throws(() => tilePath(0, 0, 257), RangeError)
    assert.throws(() => entriesPath(2 ** 53), RangeError)
  })
})

describe('tile widths and contents', () => {
  for (const v of vectors.c2spWidths) {
    test(`spec: ${v.text}`, () => {
      for (const t of v.tiles)
        assert.equal(tileWidth(t.level, t.index, v.size), t.width, `${t.level}/${t.index}`)
    })
  }

  test('a hash tile at level L holds tree level 8L nodes index*256 .. index*256 + width - 1', () => {
    assert.equal(TILE_HEIGHT, 8)
    assert.equal(TILE_WIDTH, 256)
    assert.deepEqual(
      tileNodes(0, 0, 3),
      [0, 1, 2].map((index) => ({ level: 0, index })),
    )
    const nodes = tileNodes(1, 2, 256)
    assert.deepEqual(
      [nodes.length, nodes[0], nodes[255]],
      [256, { level: 8, index: 512 }, { level: 8, index: 767 }],
    )
    assert.throws(() => tileNodes(0, 0, 0), RangeError)
  })

  test('in a 70,000-leaf tree every tile hash is the Merkle Tree Hash of a full tile below it', async () => {
    const size = 70000
    const leaves = Array.from({ length: size }, (_, i) => leafHash(new TextEncoder().encode(`entry ${i}`)))
    const log = new MemoryLog()
    for (let at = 0; at < size; at += 999) await log.append(leaves.slice(at, at + 999))
    const tile = (level: number, index: number): Hash[] =>
      tileNodes(level, index, tileWidth(level, index, size)).map((n) =>
        log.nodes.get(`${n.level}/${n.index}`)!,
      )

    // Level 0 tiles are the leaf hashes themselves: 273 full ones, then one of width 112.
    assert.deepEqual(tile(0, 273), leaves.slice(273 * 256))
    // Level 1 holds the MTH of each full level-0 tile (the partial one is not hashed in), level 2 of level 1.
    const level1 = [...tile(1, 0), ...tile(1, 1)]
    assert.equal(level1.length, 273)
    level1.forEach((h, i) => assert.deepEqual(h, rootFromLeafHashes(tile(0, i))))
    assert.deepEqual(tile(2, 0), [rootFromLeafHashes(tile(1, 0))])
    // Equivalently, the spec's MTH(D[(n * 256 + i) * 256**l : (n * 256 + i + 1) * 256**l]).
    assert.deepEqual(tile(1, 1)[16], rootFromLeafHashes(leaves.slice(272 * 256, 273 * 256)))
    assert.deepEqual(tile(2, 0)[0], rootFromLeafHashes(leaves.slice(0, 65536)))
  })

  test('a hash tile is its hashes concatenated, 1..256 of them', () => {
    const hashes = [1, 2, 3].map((i) => leafHash(Uint8Array.of(i)))
    const bytes = encodeHashTile(hashes)
    assert.equal(bytes.length, 96)
    assert.deepEqual(decodeHashTile(bytes), hashes)
    assert.throws(() => decodeHashTile(bytes.subarray(0, 95)))
    assert.throws(() => decodeHashTile(new Uint8Array(0)))
    assert.throws(() => decodeHashTile(new Uint8Array(257 * 32)))
    assert.throws(() => encodeHashTile([]), RangeError)
  })
})

describe('entry bundles', () => {
  test('each entry is a big-endian uint16 length followed by its bytes', () => {
    const bundle = encodeEntryBundle([Uint8Array.of(0x61), new Uint8Array(0), new Uint8Array(0x0102).fill(7)])
    assert.deepEqual(bundle.subarray(0, 7), Uint8Array.of(0x00, 0x01, 0x61, 0x00, 0x00, 0x01, 0x02))
    assert.equal(bundle.length, 3 + 2 + 2 + 0x0102)
  })

  test('decoding inverts encoding, up to 65535-byte entries', () => {
    const entries = [new Uint8Array(0), new Uint8Array(65535).fill(1), new TextEncoder().encode('receipt')]
    assert.deepEqual(decodeEntryBundle(encodeEntryBundle(entries)), entries)
    assert.deepEqual(decodeEntryBundle(new Uint8Array(0)), [])
  })

  test('refuses entries over 65535 bytes and truncated bundles', () => {
    assert.throws(() => encodeEntryBundle([new Uint8Array(65536)]), RangeError)
    const bundle = encodeEntryBundle([Uint8Array.of(1, 2, 3), Uint8Array.of(4)])
    assert.throws(() => decodeEntryBundle(bundle.subarray(0, bundle.length - 1)), /truncated in the entry/)
    assert.throws(() => decodeEntryBundle(bundle.subarray(0, 6)), /truncated in a length prefix/)
    assert.throws(() => decodeEntryBundle(Uint8Array.of(0, 2, 9)), /truncated/)
  })
})
