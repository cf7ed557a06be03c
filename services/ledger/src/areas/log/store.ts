import type { Hash, HashReader, NodeId } from '@svc/trust/merkle'
import type { Generated } from 'kysely'
import type { LedgerDb, LedgerTables } from '../../db.ts'

/** The log's tables: the tree's size and root, its leaves, its stored complete subtrees, its signed checkpoints. */
export interface LogTables {
  tree_state: { singleton: boolean; size: number; root_hash: Buffer }
  leaves: {
    leaf_index: number
    leaf_hash: Buffer
    entry: Buffer
    receipt_type: string
    issuer_did: string
    subject: string
    issued_at: Date
    writer: string
    integrated_at: Generated<Date>
  }
  tree_nodes: { level: number; node_index: number; hash: Buffer }
  checkpoints: { tree_size: number; root_hash: Buffer; note: string; created_at: Generated<Date> }
}

export type NewLeaf = Omit<LedgerTables['leaves'], 'integrated_at'>

/** Locks the tree for this transaction: batches, from any instance, integrate one after another. */
export async function lockTree(trx: LedgerDb): Promise<{ size: number; rootHash: Buffer }> {
  const row = await trx
    .selectFrom('tree_state')
    .select(['size', 'root_hash'])
    .forUpdate()
    .executeTakeFirstOrThrow()
  return { size: row.size, rootHash: row.root_hash }
}

export async function treeState(db: LedgerDb): Promise<{ size: number; rootHash: Buffer }> {
  const row = await db.selectFrom('tree_state').select(['size', 'root_hash']).executeTakeFirstOrThrow()
  return { size: row.size, rootHash: row.root_hash }
}

export async function indicesOf(db: LedgerDb, hashes: Buffer[]): Promise<Map<string, number>> {
  if (hashes.length === 0) return new Map()
  const rows = await db
    .selectFrom('leaves')
    .select(['leaf_index', 'leaf_hash'])
    .where('leaf_hash', 'in', hashes)
    .execute()
  return new Map(rows.map((r) => [r.leaf_hash.toString('hex'), r.leaf_index]))
}

export async function insertLeaves(trx: LedgerDb, leaves: NewLeaf[]): Promise<void> {
  for (let i = 0; i < leaves.length; i += 1000)
    await trx
      .insertInto('leaves')
      .values(leaves.slice(i, i + 1000))
      .execute()
}

export async function insertNodes(trx: LedgerDb, nodes: Array<NodeId & { hash: Hash }>): Promise<void> {
  const rows = nodes.map((n) => ({ level: n.level, node_index: n.index, hash: Buffer.from(n.hash) }))
  for (let i = 0; i < rows.length; i += 5000)
    await trx
      .insertInto('tree_nodes')
      .values(rows.slice(i, i + 5000))
      .execute()
}

export async function setTree(trx: LedgerDb, size: number, rootHash: Hash): Promise<void> {
  await trx
    .updateTable('tree_state')
    .set({ size, root_hash: Buffer.from(rootHash) })
    .execute()
}

export async function insertCheckpoint(
  trx: LedgerDb,
  size: number,
  rootHash: Hash,
  note: string,
): Promise<void> {
  await trx
    .insertInto('checkpoints')
    .values({ tree_size: size, root_hash: Buffer.from(rootHash), note })
    .execute()
}

/** A HashReader over the stored complete subtrees, consulting nodes not yet written first. */
export function nodeReader(db: LedgerDb, pending?: Map<string, Hash>): HashReader {
  return async (nodes: NodeId[]) => {
    const key = (level: number, index: number) => `${level}/${index}`
    const missing = nodes.filter((n) => !pending?.has(key(n.level, n.index)))
    const found = new Map<string, Hash>()
    for (let i = 0; i < missing.length; i += 500) {
      const chunk = missing.slice(i, i + 500)
      const rows = await db
        .selectFrom('tree_nodes')
        .select(['level', 'node_index', 'hash'])
        .where((eb) =>
          eb(
            eb.refTuple('level', 'node_index'),
            'in',
            chunk.map((n) => eb.tuple(n.level, n.index)),
          ),
        )
        .execute()
      for (const r of rows) found.set(key(r.level, r.node_index), new Uint8Array(r.hash))
    }
    return nodes.map((n) => {
      const hash = pending?.get(key(n.level, n.index)) ?? found.get(key(n.level, n.index))
      if (!hash) throw new Error(`tree node ${key(n.level, n.index)} is missing`)
      return hash
    })
  }
}

/** The checkpoint of the empty tree, once. */
export async function insertEmptyCheckpoint(db: LedgerDb, rootHash: Buffer, note: string) {
  await db
    .insertInto('checkpoints')
    .values({ tree_size: 0, root_hash: rootHash, note })
    .onConflict((oc) => oc.column('tree_size').doNothing())
    .execute()
}

/** The checkpoint note of a size as the log signed it (no cosignatures), or undefined. */
export async function signedCheckpointOf(db: LedgerDb, size: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('checkpoints')
    .select('note')
    .where('tree_size', '=', size)
    .executeTakeFirst()
  return row?.note
}

/** The latest checkpoint as the log signed it (no cosignatures). */
export const latestSignedCheckpoint = async (db: LedgerDb) => {
  const row = await db
    .selectFrom('checkpoints')
    .select(['tree_size', 'note'])
    .orderBy('tree_size', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row && { size: Number(row.tree_size), note: row.note }
}

/** The leaves [from, to) in index order. */
export async function leavesBetween(db: LedgerDb, from: number, to: number) {
  return db
    .selectFrom('leaves')
    .select(['leaf_index', 'leaf_hash', 'entry', 'integrated_at'])
    .where('leaf_index', '>=', from)
    .where('leaf_index', '<', to)
    .orderBy('leaf_index')
    .execute()
}
