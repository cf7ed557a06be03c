import { AppError, badRequest, notFound } from '@svc/kit'
import { b64Encode } from '@svc/trust/base64url'
import type { ReceiptBundle } from '@svc/trust/bundle'
import { consistencyProof, inclusionProof } from '@svc/trust/merkle'
import { encodeEntryBundle, parseTilePath, TILE_WIDTH, tileNodes, tileWidth } from '@svc/trust/tiles'
import type { LedgerDb } from '../../db.ts'
import { nodeReader, treeState } from '../log/index.ts'
import { checkpointNote, checkpointSizesAround, entriesFrom, leafAt } from './store.ts'

/**
 * A size to prove against: any size up to the latest checkpoint's. Proofs are computed from the
 * stored complete subtrees, so a size between two checkpoints (appends integrated in one batch)
 * is as provable as a checkpointed one.
 */
async function provable(db: LedgerDb, size: number | undefined): Promise<number> {
  const tree = await treeState(db)
  if (size === undefined) return tree.size
  if (size > tree.size)
    throw badRequest(`tree size ${size} is beyond the latest checkpoint (${tree.size})`, 'size_beyond_tree')
  return size
}

export async function entry(db: LedgerDb, index: number) {
  const leaf = await leafAt(db, index)
  if (!leaf) throw notFound(`no entry at index ${index}`, 'unknown_index')
  const { receipt, signature } = JSON.parse(leaf.entry.toString('utf8')) as {
    receipt: unknown
    signature: string
  }
  return {
    index,
    leaf_hash: b64Encode(leaf.leaf_hash),
    receipt,
    signature,
    integrated_at: leaf.integrated_at.toISOString(),
  }
}

export async function inclusion(db: LedgerDb, index: number, size?: number) {
  const treeSize = await provable(db, size)
  const leaf = await leafAt(db, index)
  if (!leaf) throw notFound(`no entry at index ${index}`, 'unknown_index')
  if (index >= treeSize)
    throw badRequest(`index ${index} is not in a tree of size ${treeSize}`, 'size_beyond_tree')
  const proof = await inclusionProof(index, treeSize, nodeReader(db))
  const checkpoint = await checkpointNote(db, treeSize)
  return {
    index,
    tree_size: treeSize,
    leaf_hash: b64Encode(leaf.leaf_hash),
    proof: proof.map(b64Encode),
    ...(checkpoint ? { checkpoint: checkpoint.note } : {}),
  }
}

/** A 400 naming the checkpointed sizes nearest to `size`, for what needs a signed checkpoint. */
async function noCheckpoint(db: LedgerDb, size: number): Promise<never> {
  const nearest = await checkpointSizesAround(db, size)
  const around = nearest.length ? `; the nearest checkpointed sizes are ${nearest.join(' and ')}` : ''
  throw badRequest(
    `no checkpoint was published for tree size ${size}${around} (GET /v1/checkpoints/{size})`,
    'no_checkpoint_for_size',
  )
}

export async function consistency(db: LedgerDb, from: number, to?: number) {
  const toSize = await provable(db, to)
  if (from < 1 || from > toSize) throw badRequest(`from must be between 1 and ${toSize}`, 'invalid_sizes')
  const proof = await consistencyProof(from, toSize, nodeReader(db))
  return { from, to: toSize, proof: proof.map(b64Encode) }
}

const IMMUTABLE = 'public, max-age=31536000, immutable'

/** A hash tile or an entry bundle at its C2SP tlog-tiles path; immutable once it exists. */
export async function tile(db: LedgerDb, path: string): Promise<{ body: Buffer; cacheControl: string }> {
  const parsed = parseTilePath(path)
  if (!parsed) throw notFound(`${path} is not a tile path`)
  const { size } = await treeState(db)
  const level = parsed.kind === 'entries' ? 0 : parsed.level
  const available = tileWidth(level, parsed.index, size)
  const width = parsed.width ?? TILE_WIDTH
  if (available === 0 || width > available) throw new AppError(404, 'not_found', `${path} does not exist yet`)
  if (parsed.kind === 'entries') {
    const entries = await entriesFrom(db, parsed.index * TILE_WIDTH, width)
    return { body: Buffer.from(encodeEntryBundle(entries)), cacheControl: IMMUTABLE }
  }
  const nodes = tileNodes(parsed.level, parsed.index, width)
  const hashes = await nodeReader(db)(nodes)
  return { body: Buffer.concat(hashes), cacheControl: IMMUTABLE }
}

/** A receipt with everything needed to verify it offline (see `npm run verify`). */
export async function bundle(
  db: LedgerDb,
  index: number,
  logKey: string,
  size?: number,
): Promise<ReceiptBundle> {
  const proof = await inclusion(db, index, size)
  if (proof.checkpoint === undefined) return noCheckpoint(db, proof.tree_size)
  const { receipt, signature } = await entry(db, index)
  return {
    format: 'svc-receipt-bundle/v1',
    receipt: receipt as ReceiptBundle['receipt'],
    signature,
    index,
    tree_size: proof.tree_size,
    inclusion_proof: proof.proof,
    checkpoint: proof.checkpoint,
    log_key: logKey,
  }
}
