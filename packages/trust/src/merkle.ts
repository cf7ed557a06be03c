import { createHash } from 'node:crypto'

/**
 * RFC 9162 §2.1 (Certificate Transparency 2.0) Merkle trees over SHA-256, stored the way a log keeps
 * them: the hash of every complete subtree, so roots and proofs read O(log n) stored nodes.
 */

export type Hash = Uint8Array // 32 bytes

const HASH_SIZE = 32

function sha256(...parts: Uint8Array[]): Hash {
  const h = createHash('sha256')
  for (const part of parts) h.update(part)
  return new Uint8Array(h.digest())
}

/** SHA-256 of the empty string: the root of the empty tree. */
export const EMPTY_ROOT: Hash = sha256()

const LEAF_PREFIX = Uint8Array.of(0)
const NODE_PREFIX = Uint8Array.of(1)

/** SHA-256(0x00 || data). */
export function leafHash(data: Uint8Array): Hash {
  return sha256(LEAF_PREFIX, data)
}

/** SHA-256(0x01 || left || right). */
export function nodeHash(left: Hash, right: Hash): Hash {
  if (!isHash(left) || !isHash(right)) throw new RangeError('node children must be 32-byte hashes')
  return sha256(NODE_PREFIX, left, right)
}

/** MTH(D[n]) of a list of leaf hashes. Carrying the odd last node up a level is the RFC's split at k. */
export function rootFromLeafHashes(leaves: Hash[]): Hash {
  if (leaves.length === 0) return EMPTY_ROOT.slice()
  let level = leaves.map((leaf, i) => checkHash(leaf, `leaves[${i}]`))
  while (level.length > 1) {
    const next: Hash[] = []
    for (let i = 0; i + 1 < level.length; i += 2) next.push(nodeHash(level[i]!, level[i + 1]!))
    if (level.length % 2 === 1) next.push(level[level.length - 1]!)
    level = next
  }
  return level[0]!
}

/** A node is the complete subtree at (level, index): it covers leaves [index * 2^level, (index + 1) * 2^level). Level 0 nodes are leaf hashes. */
export interface NodeId {
  level: number
  index: number
}

/** Reads stored hashes of complete subtrees, in the order asked (batched so a database can answer in one query). */
export type HashReader = (nodes: NodeId[]) => Promise<Hash[]>

/**
 * The nodes a log stores: every complete subtree. Appending leaves [oldSize, oldSize + leafHashes.length)
 * completes these nodes (including the leaves themselves at level 0), each leaf followed by the parents
 * it completes; earlier nodes it needs (the old tree's right-edge subtrees) are read in one call.
 */
export async function appendLeaves(
  oldSize: number,
  leafHashes: Hash[],
  read: HashReader,
): Promise<Array<NodeId & { hash: Hash }>> {
  checkCount(oldSize, 'oldSize')
  checkCount(oldSize + leafHashes.length, 'new size')
  leafHashes.forEach((leaf, i) => checkHash(leaf, `leafHashes[${i}]`))
  if (leafHashes.length === 0) return []
  const newSize = oldSize + leafHashes.length

  // The old tree's right edge, left to right. Each is a left child; it is needed only when the new
  // leaves complete its parent.
  const edge: Array<NodeId & { hash?: Hash }> = subtreesOf(0, oldSize)
  const needed = edge.filter((n) => (n.index + 2) * 2 ** n.level <= newSize)
  const hashes = await readChecked(read, needed)
  needed.forEach((n, i) => {
    n.hash = hashes[i]
  })

  const out: Array<NodeId & { hash: Hash }> = []
  leafHashes.forEach((leaf, i) => {
    let node: NodeId & { hash: Hash } = { level: 0, index: oldSize + i, hash: leaf.slice() }
    out.push(node)
    while (node.index % 2 === 1) {
      const left = edge.pop()
      if (left?.hash === undefined || left.level !== node.level || left.index !== node.index - 1) {
        throw new Error('appendLeaves: inconsistent right edge')
      }
      node = { level: node.level + 1, index: left.index / 2, hash: nodeHash(left.hash, node.hash) }
      out.push(node)
    }
    edge.push(node)
  })
  return out
}

/** The root of the first `size` leaves, from stored complete subtrees (one read of at most log2(size) nodes). */
export async function treeRoot(size: number, read: HashReader): Promise<Hash> {
  checkCount(size, 'size')
  if (size === 0) return EMPTY_ROOT.slice()
  const [root] = await hashRanges([[0, size]], read)
  return root!
}

/** RFC 9162 §2.1.3.1 PATH(m, D[n]): the inclusion proof of leaf `index` in the tree of `size` leaves. */
export async function inclusionProof(index: number, size: number, read: HashReader): Promise<Hash[]> {
  checkCount(index, 'index')
  checkCount(size, 'size')
  if (index >= size) throw new RangeError(`index ${index} is not below size ${size}`)
  const ranges: Array<[number, number]> = []
  let lo = 0
  let hi = size
  while (hi - lo > 1) {
    const k = splitPoint(hi - lo)
    if (index < lo + k) {
      ranges.push([lo + k, hi])
      hi = lo + k
    } else {
      ranges.push([lo, lo + k])
      lo += k
    }
  }
  return hashRanges(ranges.reverse(), read)
}

/** RFC 9162 §2.1.4.1 PROOF(m, D[n]) for 0 < oldSize <= newSize (empty when the sizes are equal). */
export async function consistencyProof(oldSize: number, newSize: number, read: HashReader): Promise<Hash[]> {
  checkCount(oldSize, 'oldSize')
  checkCount(newSize, 'newSize')
  if (oldSize === 0 || oldSize > newSize) {
    throw new RangeError(`consistency needs 0 < oldSize <= newSize, got ${oldSize}, ${newSize}`)
  }
  // SUBPROOF(m, D[lo:hi], b) unrolled; `whole` is the RFC's b.
  const ranges: Array<[number, number]> = []
  let lo = 0
  let hi = newSize
  let whole = true
  while (oldSize !== hi) {
    const k = splitPoint(hi - lo)
    if (oldSize - lo <= k) {
      ranges.push([lo + k, hi])
      hi = lo + k
    } else {
      ranges.push([lo, lo + k])
      lo += k
      whole = false
    }
  }
  if (!whole) ranges.push([lo, hi])
  return hashRanges(ranges.reverse(), read)
}

/** RFC 9162 §2.1.3.2. Any malformed input (bad number, hash not 32 bytes, index >= size) fails. */
export function verifyInclusion(leaf: Hash, index: number, size: number, proof: Hash[], root: Hash): boolean {
  if (!isCount(index) || !isCount(size) || index >= size) return false
  if (!isHash(leaf) || !isHash(root) || !proof.every(isHash)) return false
  let fn = index
  let sn = size - 1
  let r = leaf
  for (const p of proof) {
    if (sn === 0) return false
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r)
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2
        sn = Math.floor(sn / 2)
      }
    } else {
      r = nodeHash(r, p)
    }
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return sn === 0 && equalHashes(r, root)
}

/**
 * RFC 9162 §2.1.4.2 for 0 < oldSize < newSize. The RFC leaves out the trivial cases, decided here as
 * its PROOF defines them: equal sizes are consistent with an empty proof and equal roots, and the empty
 * tree (root SHA-256("")) with any tree by an empty proof.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Hash,
  newRoot: Hash,
  proof: Hash[],
): boolean {
  if (!isCount(oldSize) || !isCount(newSize) || oldSize > newSize) return false
  if (!isHash(oldRoot) || !isHash(newRoot) || !proof.every(isHash)) return false
  if (oldSize === newSize) return proof.length === 0 && equalHashes(oldRoot, newRoot)
  if (oldSize === 0) return proof.length === 0 && equalHashes(oldRoot, EMPTY_ROOT)
  if (proof.length === 0) return false
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : proof
  let fn = oldSize - 1
  let sn = newSize - 1
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2
    sn = Math.floor(sn / 2)
  }
  let fr = path[0]!
  let sr = path[0]!
  for (const c of path.slice(1)) {
    if (sn === 0) return false
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr)
      sr = nodeHash(c, sr)
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2
        sn = Math.floor(sn / 2)
      }
    } else {
      sr = nodeHash(sr, c)
    }
    fn = Math.floor(fn / 2)
    sn = Math.floor(sn / 2)
  }
  return equalHashes(fr, oldRoot) && equalHashes(sr, newRoot) && sn === 0
}

/**
 * The complete subtrees that make up leaves [start, end), largest first. For the ranges a proof names
 * (start aligned to a power of two at least end - start), their right fold is MTH(D[start:end]).
 */
export function subtreesOf(start: number, end: number): NodeId[] {
  const nodes: NodeId[] = []
  let at = start
  while (at < end) {
    let level = 0
    while (at % 2 ** (level + 1) === 0 && at + 2 ** (level + 1) <= end) level++
    nodes.push({ level, index: at / 2 ** level })
    at += 2 ** level
  }
  return nodes
}

/** MTH of each range, reading all the stored subtrees they need in a single call. */
async function hashRanges(ranges: Array<[number, number]>, read: HashReader): Promise<Hash[]> {
  const parts = ranges.map(([start, end]) => subtreesOf(start, end))
  const hashes = await readChecked(read, parts.flat())
  let at = 0
  return parts.map((nodes) => {
    const own = hashes.slice(at, (at += nodes.length))
    return own.reduceRight((right, left) => nodeHash(left, right))
  })
}

async function readChecked(read: HashReader, nodes: NodeId[]): Promise<Hash[]> {
  if (nodes.length === 0) return []
  const hashes = await read(nodes)
  if (hashes.length !== nodes.length) {
    throw new Error(`HashReader returned ${hashes.length} hashes for ${nodes.length} nodes`)
  }
  hashes.forEach((h, i) => checkHash(h, `stored hash of node ${nodes[i]!.level}/${nodes[i]!.index}`))
  return hashes
}

/** The largest power of two below n (n >= 2): where MTH splits D[n]. */
function splitPoint(n: number): number {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

function isPowerOfTwo(n: number): boolean {
  let k = 1
  while (k < n) k *= 2
  return k === n
}

function isCount(n: unknown): n is number {
  return Number.isSafeInteger(n) && (n as number) >= 0
}

function checkCount(n: number, name: string): void {
  if (!isCount(n)) throw new RangeError(`${name} must be a non-negative safe integer, got ${n}`)
}

function isHash(h: unknown): h is Hash {
  return h instanceof Uint8Array && h.length === HASH_SIZE
}

function checkHash(h: Hash, name: string): Hash {
  if (!isHash(h)) throw new RangeError(`${name} must be a 32-byte hash`)
  return h
}

function equalHashes(a: Hash, b: Hash): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i])
}
