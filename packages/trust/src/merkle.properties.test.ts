import assert from 'node:assert/strict'
import { before, describe, test } from 'node:test'
import {
  EMPTY_ROOT,
  appendLeaves,
  consistencyProof,
  inclusionProof,
  leafHash,
  nodeHash,
  rootFromLeafHashes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
  type Hash,
  type HashReader,
  type NodeId,
} from './merkle.ts'
import { MemoryLog } from './merkle.testkit.ts'

const N = 1000
const leaves = Array.from({ length: N }, (_, i) => leafHash(new TextEncoder().encode(`leaf ${i}`)))
const flipped = (h: Hash): Hash => h.map((b, i) => (i === 0 ? b ^ 1 : b))
const replaced = (proof: Hash[], i: number, h: Hash): Hash[] => proof.map((p, j) => (j === i ? h : p))
const log2ceil = (n: number): number => Math.ceil(Math.log2(n))
const popcount = (n: number): number => n.toString(2).replaceAll('0', '').length

const log = new MemoryLog()
const roots: Hash[] = [] // roots[size], from the plain list of leaves

before(async () => {
  const batches = [1, 0, 2, 5, 64, 3, 200, 1, 17, 255, 2, 129]
  for (let i = 0; log.size < N; i++) {
    const oldSize = log.size
    const n = Math.min(batches[i % batches.length]!, N - oldSize)
    log.resetCounts()
    await log.append(leaves.slice(oldSize, oldSize + n))
    // One batched read, of at most the old tree's right-edge subtrees.
    assert.ok(log.calls <= 1 && log.nodesRead <= popcount(oldSize), `append at ${oldSize} read too much`)
  }
  for (let size = 0; size <= N; size++) roots.push(rootFromLeafHashes(leaves.slice(0, size)))
})

describe('a 1,000-leaf log fed by appendLeaves in uneven batches', () => {
  test('stores every complete subtree, and only those', () => {
    let complete = 0
    for (let level = 0; 2 ** level <= N; level++) complete += Math.floor(N / 2 ** level)
    assert.equal(log.nodes.size, complete)
    for (const key of log.nodes.keys()) {
      const [level, index] = key.split('/').map(Number) as [number, number]
      assert.ok((index + 1) * 2 ** level <= N, `${key} is not complete`)
    }
  })

  test('treeRoot equals rootFromLeafHashes at every size 0..1000, in one read of popcount(size) nodes', async () => {
    for (let size = 0; size <= N; size++) {
      log.resetCounts()
      assert.deepEqual(await treeRoot(size, log.reader(size)), roots[size])
      assert.ok(log.calls <= 1 && log.nodesRead === popcount(size))
    }
  })

  test('every inclusion proof at many sizes verifies, from one read of O(log n) nodes', async () => {
    for (const size of [1, 2, 3, 4, 5, 7, 8, 9, 100, 255, 256, 257, 511, 512, 513, 999, 1000]) {
      for (let index = 0; index < size; index++) {
        log.resetCounts()
        const proof = await inclusionProof(index, size, log.reader(size))
        assert.ok(log.calls <= 1 && log.nodesRead <= 2 * log2ceil(size), `read ${log.nodesRead} at ${size}`)
        assert.ok(proof.length <= log2ceil(size))
        assert.ok(verifyInclusion(leaves[index]!, index, size, proof, roots[size]!), `${index} in ${size}`)
      }
    }
  })

  test('inclusion verification rejects tampered proofs, wrong leaves, roots and indexes', async () => {
    for (const size of [2, 7, 257, 1000]) {
      const root = roots[size]!
      for (let index = 0; index < size; index++) {
        const proof = await inclusionProof(index, size, log.reader(size))
        const leaf = leaves[index]!
        proof.forEach((p, i) =>
          assert.equal(verifyInclusion(leaf, index, size, replaced(proof, i, flipped(p)), root), false),
        )
        assert.equal(verifyInclusion(leaves[(index + 1) % size]!, index, size, proof, root), false)
        assert.equal(verifyInclusion(leaf, index, size, proof, flipped(root)), false)
        assert.equal(verifyInclusion(leaf, index, size, [...proof, root], root), false)
        assert.equal(verifyInclusion(leaf, index, size, proof.slice(0, -1), root), false)
        assert.equal(verifyInclusion(leaf, size, size, proof, root), false)
        assert.equal(verifyInclusion(leaf, index, size, proof, roots[size - 1]!), false)
      }
    }
  })

  test('consistency proofs verify for every pair up to 64 and for sampled pairs up to 1000', async () => {
    const pairs: Array<[number, number]> = []
    for (let n = 1; n <= 64; n++) for (let m = 1; m <= n; m++) pairs.push([m, n])
    for (let m = 1; m <= N; m += 37) for (let n = m; n <= N; n += 53) pairs.push([m, n])
    for (const m of [255, 256, 257, 511, 512, 513, 999]) pairs.push([m, 1000], [m, 999], [1, m])
    for (const [m, n] of pairs) {
      log.resetCounts()
      const proof = await consistencyProof(m, n, log.reader(n))
      assert.ok(
        log.calls <= 1 && log.nodesRead <= 2 * (log2ceil(n) + 1),
        `read ${log.nodesRead} for ${m}..${n}`,
      )
      assert.ok(verifyConsistency(m, n, roots[m]!, roots[n]!, proof), `${m} -> ${n}`)
      if (m === n) {
        assert.deepEqual(proof, [])
        continue
      }
      proof.forEach((p, i) =>
        assert.equal(verifyConsistency(m, n, roots[m]!, roots[n]!, replaced(proof, i, flipped(p))), false),
      )
      assert.equal(verifyConsistency(m, n, roots[n]!, roots[m]!, proof), false)
      assert.equal(verifyConsistency(m, n, flipped(roots[m]!), roots[n]!, proof), false)
      assert.equal(verifyConsistency(m, n, roots[m]!, flipped(roots[n]!), proof), false)
      assert.equal(verifyConsistency(m, n, roots[m]!, roots[n]!, proof.slice(0, -1)), false)
      assert.equal(verifyConsistency(m, n, roots[m]!, roots[n]!, [...proof, roots[n]!]), false)
      assert.equal(verifyConsistency(n, m, roots[n]!, roots[m]!, proof), false)
    }
  })

  test('the empty tree is consistent with any tree by an empty proof, and only with its own root', () => {
    assert.ok(verifyConsistency(0, 10, EMPTY_ROOT, roots[10]!, []))
    assert.ok(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, []))
    assert.equal(verifyConsistency(0, 10, roots[1]!, roots[10]!, []), false)
    assert.equal(verifyConsistency(0, 10, EMPTY_ROOT, roots[10]!, [roots[10]!]), false)
  })
})

describe('work done for very large trees', () => {
  // Serves a made-up hash for any complete subtree of a tree of `size` leaves, counting what is read.
  function fakeReader(size: number, stats: { calls: number; nodes: number }): HashReader {
    return async (ids: NodeId[]) => {
      stats.calls++
      stats.nodes += ids.length
      return ids.map(({ level, index }) => {
        assert.ok((index + 1) * 2 ** level <= size, `read incomplete node ${level}/${index}`)
        return leafHash(new TextEncoder().encode(`${level}/${index}`))
      })
    }
  }
  const MAX = Number.MAX_SAFE_INTEGER // 2^53 - 1 leaves

  test('proofs and roots in a tree of 2^53 - 1 leaves read at most 2 * 53 + 2 nodes in one call', async () => {
    for (const index of [0, 1, 2 ** 40 + 12345, MAX - 2, MAX - 1]) {
      const stats = { calls: 0, nodes: 0 }
      const proof = await inclusionProof(index, MAX, fakeReader(MAX, stats))
      assert.ok(stats.calls === 1 && stats.nodes <= 2 * 53 && proof.length <= 53)
    }
    for (const oldSize of [1, 2 ** 52, 2 ** 52 + 1, 2 ** 40 + 12345, MAX - 1, MAX]) {
      const stats = { calls: 0, nodes: 0 }
      const proof = await consistencyProof(oldSize, MAX, fakeReader(MAX, stats))
      assert.ok(stats.calls <= 1 && stats.nodes <= 2 * 53 + 2 && proof.length <= 54)
    }
    const stats = { calls: 0, nodes: 0 }
    await treeRoot(MAX, fakeReader(MAX, stats))
    assert.deepEqual(stats, { calls: 1, nodes: 53 })
  })

  test('appending the 2^52-th leaf reads the 52 right-edge subtrees once and completes 52 parents', async () => {
    const oldSize = 2 ** 52 - 1
    const stats = { calls: 0, nodes: 0 }
    const added = await appendLeaves(oldSize, [leaves[0]!], fakeReader(oldSize, stats))
    assert.deepEqual(stats, { calls: 1, nodes: 52 })
    assert.deepEqual(
      added.map(({ level, index }) => [level, index]),
      Array.from({ length: 53 }, (_, level) => [level, (2 ** 52 - 2 ** level) / 2 ** level]),
    )
    const sibling = leafHash(new TextEncoder().encode(`0/${oldSize - 1}`))
    assert.deepEqual(added[1]!.hash, nodeHash(sibling, leaves[0]!))
  })
})

describe('argument checks', () => {
  const reader = log.reader()
  test('proof generation throws RangeError for out-of-range indexes and sizes', async () => {
    await assert.rejects(inclusionProof(5, 5, reader), RangeError)
    await assert.rejects(inclusionProof(-1, 5, reader), RangeError)
    await assert.rejects(inclusionProof(0.5, 5, reader), RangeError)
    await assert.rejects(consistencyProof(0, 5, reader), RangeError)
    await assert.rejects(consistencyProof(6, 5, reader), RangeError)
    await assert.rejects(treeRoot(2 ** 53, reader), RangeError)
    await assert.rejects(appendLeaves(Number.MAX_SAFE_INTEGER, [leaves[0]!], reader), RangeError)
    await assert.rejects(appendLeaves(0, [new Uint8Array(31)], reader), RangeError)
  })

  test('verification returns false, never throws, on malformed input', () => {
    assert.equal(verifyInclusion(leaves[0]!, 0, 2 ** 64, [], roots[1]!), false)
    assert.equal(verifyInclusion(leaves[0]!, NaN, 1, [], leaves[0]!), false)
    assert.equal(verifyInclusion(new Uint8Array(33), 0, 1, [], new Uint8Array(33)), false)
    assert.equal(verifyConsistency(1, 2, roots[1]!, roots[2]!, [new Uint8Array(0)]), false)
    assert.equal(verifyConsistency(-1, 2, roots[1]!, roots[2]!, []), false)
  })

  test('a HashReader answering the wrong number of hashes is an error', async () => {
    await assert.rejects(
      treeRoot(3, async () => [EMPTY_ROOT]),
      /returned 1 hashes for 2 nodes/,
    )
  })
})
