import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { formatCheckpoint, parseCheckpoint, type Checkpoint } from './checkpoint.ts'
import { generateNoteKey, openNote, parseNote, signerFromKey, signNote, verifierFromKey } from './note.ts'

const vectors = (file: string): unknown =>
  JSON.parse(readFileSync(new URL(`../testdata/note/${file}`, import.meta.url), 'utf8'))

const c2sp = vectors('c2sp-examples.json') as {
  checkpoint: { note: string; origin: string; size: number; rootHash: string }
}
const tlog = vectors('go-sumdb-tlog.json') as {
  tree: string
  origin: string
  size: number
  recordData: string
  badTrees: string[]
}
const formats = vectors('transparency-dev-formats.json') as {
  checkpointMarshal: { origin: string; size: number; hashUtf8: string; text: string }[]
  checkpointInvalid: { desc: string; text: string }[]
}

const b64 = (s: string) => new Uint8Array(Buffer.from(s, 'base64'))
const hash = new Uint8Array(32).fill(0xab)

describe('checkpoints against published examples', () => {
  it('parses the c2sp.org/tlog-checkpoint example and formats it back', () => {
    const { text } = parseNote(c2sp.checkpoint.note)
    const c = parseCheckpoint(text)
    assert.deepEqual(c, {
      origin: c2sp.checkpoint.origin,
      size: c2sp.checkpoint.size,
      rootHash: b64(c2sp.checkpoint.rootHash),
      extensions: [],
    })
    assert.equal(formatCheckpoint(c), text)
  })

  it('formats the golang.org/x/mod/sumdb/tlog tree golden text', () => {
    const leaf = createHash('sha256')
      .update(Buffer.from([0]))
      .update(tlog.recordData)
      .digest()
    const c: Checkpoint = {
      origin: tlog.origin,
      size: tlog.size,
      rootHash: new Uint8Array(leaf),
      extensions: [],
    }
    assert.equal(formatCheckpoint(c), tlog.tree)
    assert.deepEqual(parseCheckpoint(tlog.tree), c)
  })

  it('rejects the bad sumdb trees, except the one whose only fault is its origin', () => {
    const [otherOrigin, hexSize, badHash] = tlog.badTrees
    assert.equal(parseCheckpoint(otherOrigin!).origin, 'not-go.sum database tree')
    assert.throws(() => parseCheckpoint(hexSize!), /tree size "0xabcdef" is not a decimal/)
    assert.throws(() => parseCheckpoint(badHash!), /root hash/)
  })

  it('reads lines after the root hash as extension lines, which must end in a newline', () => {
    assert.deepEqual(parseCheckpoint(`${tlog.tree}JOE\n`).extensions, ['JOE'])
    assert.equal(parseCheckpoint(tlog.tree + 'JOE\n'.repeat(1000)).extensions.length, 1000)
    assert.throws(() => parseCheckpoint(`${tlog.tree}JOE`), /does not end in a newline/)
  })

  it('rejects the invalid checkpoints of transparency-dev/formats', () => {
    for (const { desc, text } of formats.checkpointInvalid) {
      assert.throws(() => parseCheckpoint(text), /^Error: malformed checkpoint: /, desc)
    }
  })

  it('rejects the transparency-dev/formats checkpoints whose root hash is not 32 bytes', () => {
    for (const { origin, size, hashUtf8, text } of formats.checkpointMarshal) {
      assert.throws(() => parseCheckpoint(text), /root hash is not 32 bytes/)
      const c = { origin, size, rootHash: new Uint8Array(Buffer.from(hashUtf8)), extensions: [] }
      assert.throws(() => formatCheckpoint(c), /root hash is not 32 bytes/)
    }
  })
})

describe('checkpoints: round trips and rejections', () => {
  it('round-trips extension lines, the empty tree and the largest safe size', () => {
    for (const c of [
      { origin: 'example.com/log', size: 5, rootHash: hash, extensions: ['ext one', '— two'] },
      { origin: 'example.com/log', size: 0, rootHash: hash, extensions: [] },
      { origin: 'ünïcode origin', size: Number.MAX_SAFE_INTEGER, rootHash: hash, extensions: [] },
    ]) {
      assert.deepEqual(parseCheckpoint(formatCheckpoint(c)), c)
    }
    assert.equal(
      formatCheckpoint({ origin: 'o', size: 0, rootHash: hash, extensions: ['x'] }),
      `o\n0\n${Buffer.from(hash).toString('base64')}\nx\n`,
    )
  })

  it('rejects malformed checkpoint texts with clear errors', () => {
    const h = Buffer.from(hash).toString('base64')
    const cases: [string, RegExp][] = [
      [`o\n007\n${h}\n`, /not a decimal without leading zeros/],
      [`o\n+5\n${h}\n`, /not a decimal/],
      [`o\n 5\n${h}\n`, /not a decimal/],
      [`o\n\n${h}\n`, /not a decimal/],
      [`o\n9007199254740992\n${h}\n`, /too large/],
      [`\n5\n${h}\n`, /origin line is empty/],
      [`o\n5\n${h}`, /does not end in a newline/],
      [`o\n5\n${h}\n\next\n`, /extension line is empty/],
      [`o\n5\n${h}\n\n`, /extension line is empty/],
      [`o\n5\n${h.slice(0, -2)}=\n`, /root hash is not canonical/],
      [`o\n5\n${h.slice(0, -2)}t=\n`, /root hash is not canonical/],
      [`o\n5\n${Buffer.alloc(31).toString('base64')}\n`, /not 32 bytes/],
      [`o\r\n5\n${h}\n`, /control character U\+000d/],
      [`o\n5\n${h}\n\tx\n`, /control character U\+0009/],
    ]
    for (const [text, why] of cases) assert.throws(() => parseCheckpoint(text), why, JSON.stringify(text))
  })

  it('refuses to format what it could not parse back', () => {
    const base = { origin: 'o', size: 1, rootHash: hash, extensions: [] as string[] }
    assert.throws(() => formatCheckpoint({ ...base, origin: '' }), /origin line is empty/)
    assert.throws(() => formatCheckpoint({ ...base, origin: 'a\nb' }), /origin line: holds a newline/)
    assert.throws(() => formatCheckpoint({ ...base, size: -1 }), /tree size/)
    assert.throws(() => formatCheckpoint({ ...base, size: 1.5 }), /tree size/)
    assert.throws(() => formatCheckpoint({ ...base, size: 2 ** 53 }), /tree size/)
    assert.throws(() => formatCheckpoint({ ...base, extensions: [''] }), /extension line is empty/)
    assert.throws(() => formatCheckpoint({ ...base, extensions: ['a\nb'] }), /holds a newline/)
  })

  it('signs a checkpoint as a note that opens with the log key', () => {
    const keys = generateNoteKey('example.com/log', new Uint8Array(32).fill(1))
    const text = formatCheckpoint({ origin: 'example.com/log', size: 10, rootHash: hash, extensions: [] })
    const note = signNote(text, [signerFromKey(keys.signerKey)])
    const opened = openNote(note, [verifierFromKey(keys.verifierKey)])
    assert.equal(parseCheckpoint(opened.text).size, 10)
    assert.throws(
      () => openNote(note.replace('\n10\n', '\n11\n'), [verifierFromKey(keys.verifierKey)]),
      /invalid/,
    )
  })
})
