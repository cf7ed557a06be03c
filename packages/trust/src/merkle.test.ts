import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, test } from 'node:test'
import {
  EMPTY_ROOT,
  consistencyProof,
  inclusionProof,
  leafHash,
  nodeHash,
  rootFromLeafHashes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  type Hash,
} from './merkle.ts'
import { MemoryLog } from './merkle.testkit.ts'

const testdata = <T>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../testdata/merkle/${name}`, import.meta.url), 'utf8')) as T
const hex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'))
const b64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'))
const toHex = (h: Uint8Array): string => Buffer.from(h).toString('hex')
const flipped = (h: Hash, bit = 3): Hash => h.map((b, i) => (i === 0 ? b ^ (1 << bit) : b))

interface Reference {
  leafInputs: string[]
  nodeHashes: string[][]
  rootHashes: string[]
}
const reference = testdata<Reference>('transparency-dev-testonly.json')
const referenceLeaves = reference.leafInputs.map((s) => leafHash(hex(s)))

async function referenceLog(batches: number[]): Promise<MemoryLog> {
  const log = new MemoryLog()
  let at = 0
  for (const n of batches) await log.append(referenceLeaves.slice(at, (at += n)))
  return log
}

describe('RFC 9162 hashing against transparency-dev/merkle testonly/constants.go', () => {
  test('EMPTY_ROOT is the published empty-tree root', () => {
    assert.equal(toHex(EMPTY_ROOT), reference.rootHashes[0])
  })

  test('leafHash of the published leaf inputs gives the published level-0 hashes', () => {
    assert.deepEqual(referenceLeaves.map(toHex), reference.nodeHashes[0])
  })

  test('nodeHash of published children gives the published parents', () => {
    for (let level = 1; level < reference.nodeHashes.length; level++) {
      reference.nodeHashes[level]!.forEach((parent, i) => {
        const children = reference.nodeHashes[level - 1]!
        assert.equal(toHex(nodeHash(hex(children[2 * i]!), hex(children[2 * i + 1]!))), parent)
      })
    }
  })

  test('rootFromLeafHashes gives the published roots for sizes 0..8', () => {
    reference.rootHashes.forEach((root, size) => {
      assert.equal(toHex(rootFromLeafHashes(referenceLeaves.slice(0, size))), root)
    })
  })

  test('appendLeaves in uneven batches stores exactly the published complete subtrees', async () => {
    const log = await referenceLog([3, 0, 1, 4])
    const expected = new Map(
      reference.nodeHashes.flatMap((row, level) => row.map((h, i) => [`${level}/${i}`, h])),
    )
    assert.deepEqual(new Map([...log.nodes].map(([k, h]) => [k, toHex(h)])), expected)
  })

  test('treeRoot from stored subtrees gives the published roots for sizes 0..8', async () => {
    const log = await referenceLog([8])
    for (const [size, root] of reference.rootHashes.entries()) {
      assert.equal(toHex(await treeRoot(size, log.reader(size))), root)
    }
  })
})

interface InclusionCase {
  file: string
  leafIdx: number
  treeSize: number
  root: string
  leafHash: string
  proof: string[] | null
  desc: string
  wantErr: boolean
}
interface ConsistencyCase {
  file: string
  size1: number
  size2: number
  root1: string
  root2: string
  proof: string[] | null
  desc: string
  wantErr: boolean
}

describe('transparency-dev/merkle testdata/inclusion', () => {
  const { cases } = testdata<{ cases: InclusionCase[] }>('transparency-dev-inclusion.json')
  for (const c of cases) {
    const proof = (c.proof ?? []).map(b64)
    test(`${c.file} (${c.desc}) ${c.wantErr ? 'fails' : 'verifies'}`, async () => {
      assert.equal(verifyInclusion(b64(c.leafHash), c.leafIdx, c.treeSize, proof, b64(c.root)), !c.wantErr)
      if (c.wantErr) return
      const log = await referenceLog([8])
      assert.deepEqual(
        (await inclusionProof(c.leafIdx, c.treeSize, log.reader(c.treeSize))).map(toHex),
        proof.map(toHex),
      )
    })
  }
})

describe('transparency-dev/merkle testdata/consistency', () => {
  const { cases } = testdata<{ cases: ConsistencyCase[] }>('transparency-dev-consistency.json')
  for (const c of cases) {
    const proof = (c.proof ?? []).map(b64)
    test(`${c.file} (${c.desc}) ${c.wantErr ? 'fails' : 'verifies'}`, async () => {
      assert.equal(verifyConsistency(c.size1, c.size2, b64(c.root1), b64(c.root2), proof), !c.wantErr)
      if (c.wantErr) return
      const log = await referenceLog([8])
      const generated = await consistencyProof(c.size1, c.size2, log.reader(c.size2))
      assert.deepEqual(generated.map(toHex), proof.map(toHex))
    })
  }
})

describe('RFC 6962 §2.1.3 (RFC 9162 §2.1.5) worked example', () => {
  interface Example {
    treeSize: number
    nodes: Record<string, [number, number]>
    inclusion: Array<{ text: string; index: number; path: string[] }>
    consistency: Array<{ text: string; oldSize: number; proof: string[] }>
  }
  const example = testdata<Example>('rfc6962-example.json')
  const label = (name: string): string => {
    const [start, end] = example.nodes[name]!
    return toHex(rootFromLeafHashes(referenceLeaves.slice(start, end)))
  }

  for (const c of example.inclusion) {
    test(c.text, async () => {
      const log = await referenceLog([example.treeSize])
      const proof = await inclusionProof(c.index, example.treeSize, log.reader())
      assert.deepEqual(proof.map(toHex), c.path.map(label))
      assert.ok(
        verifyInclusion(referenceLeaves[c.index]!, c.index, example.treeSize, proof, hex(label('hash'))),
      )
    })
  }
  for (const c of example.consistency) {
    test(c.text, async () => {
      const log = await referenceLog([example.treeSize])
      const proof = await consistencyProof(c.oldSize, example.treeSize, log.reader())
      assert.deepEqual(proof.map(toHex), c.proof.map(label))
      const oldRoot = rootFromLeafHashes(referenceLeaves.slice(0, c.oldSize))
      assert.ok(verifyConsistency(c.oldSize, example.treeSize, oldRoot, hex(label('hash')), proof))
    })
  }
})

describe('a real Certificate Transparency log (Argon 2020, golang/mod sumdb/tlog testdata)', () => {
  const ct = testdata<{
    sth: { tree_size: number; sha256_root_hash: string }
    entry: { leaf_index: number; leaf_input: string }
    audit_path: string[]
    consistency: { first: number; firstRoot: string; proof: string[] }
  }>('go-sumdb-argon2020.json')
  const root = b64(ct.sth.sha256_root_hash)
  const leaf = leafHash(b64(ct.entry.leaf_input))
  const path = ct.audit_path.map(b64)
  const cons = ct.consistency.proof.map(b64)
  const firstRoot = b64(ct.consistency.firstRoot)

  test('the audit path of entry 10000 in the 961,984,013-entry tree verifies', () => {
    assert.ok(verifyInclusion(leaf, ct.entry.leaf_index, ct.sth.tree_size, path, root))
  })

  test('the audit path fails for another index, another size, or a flipped bit', () => {
    assert.equal(verifyInclusion(leaf, ct.entry.leaf_index + 1, ct.sth.tree_size, path, root), false)
    assert.equal(verifyInclusion(leaf, ct.entry.leaf_index, ct.sth.tree_size * 2, path, root), false)
    path.forEach((_, i) => {
      const bad = path.map((h, j) => (j === i ? flipped(h) : h))
      assert.equal(verifyInclusion(leaf, ct.entry.leaf_index, ct.sth.tree_size, bad, root), false)
    })
  })

  test('the consistency proof from size 3,654,490 verifies and fails when tampered', () => {
    assert.ok(verifyConsistency(ct.consistency.first, ct.sth.tree_size, firstRoot, root, cons))
    assert.equal(verifyConsistency(ct.consistency.first + 1, ct.sth.tree_size, firstRoot, root, cons), false)
    assert.equal(verifyConsistency(ct.consistency.first, ct.sth.tree_size, root, firstRoot, cons), false)
    assert.equal(
      verifyConsistency(ct.consistency.first, ct.sth.tree_size, firstRoot, root, cons.slice(1)),
      false,
    )
    cons.forEach((_, i) => {
      const bad = cons.map((h, j) => (j === i ? flipped(h, 4) : h))
      assert.equal(verifyConsistency(ct.consistency.first, ct.sth.tree_size, firstRoot, root, bad), false)
    })
  })
})
