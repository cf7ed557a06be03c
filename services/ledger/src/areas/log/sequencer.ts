import type { Logger } from 'pino'
import { currentSpanContext, currentTraceparent, SpanKind, withSpan, withStoredParent } from '@svc/kit'
import { formatCheckpoint } from '@svc/trust/checkpoint'
import { appendLeaves, type Hash, treeRoot } from '@svc/trust/merkle'
import { type NoteSigner, signNote } from '@svc/trust/note'
import type { Kysely, Transaction } from 'kysely'
import type { LedgerTables } from '../../db.ts'
import {
  indicesOf,
  insertCheckpoint,
  insertLeaves,
  insertNodes,
  lockTree,
  type NewLeaf,
  nodeReader,
  setTree,
} from './store.ts'

export interface Sequenced {
  index: number
  leafHash: Buffer
  treeSize: number
  duplicate: boolean
}

interface Pending {
  leaf: Omit<NewLeaf, 'leaf_index'>
  /** when it was submitted: its wait until its checkpoint committed is the checkpoint lag */
  at: number
  /** the appending request's span (tracing on): the batch links to each, and runs in the first's trace */
  traceparent: string | undefined
  span: ReturnType<typeof currentSpanContext>
  resolve: (result: Sequenced) => void
  reject: (err: Error) => void
}

export interface SequencerOptions {
  origin: string
  signer: NoteSigner
  batchMax: number
  batchWaitMs: number
  log: Logger
  /** Runs inside each batch's transaction with the new leaves' range (enqueues their events). */
  onBatch?: (trx: Transaction<LedgerTables>, from: number, to: number) => Promise<void>
  /** Runs after a batch that grew the tree has committed (asks the witnesses to cosign). */
  onPublished?: (size: number) => void
  /** After each batch: how many appends it integrated, and how long its oldest waited for its checkpoint. */
  observe?: (size: number, lagMs: number) => void
}

/**
 * Pools appends for a few milliseconds, then integrates them in one transaction: indices in
 * order, leaves, the newly completed subtree hashes, the new root and its signed checkpoint.
 * An append is answered only after that commit, so nothing acknowledged can be lost, and every
 * acknowledged receipt is already in a published checkpoint.
 */
export class Sequencer {
  readonly #queue: Pending[] = []
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined

  constructor(
    private readonly db: Kysely<LedgerTables>,
    private readonly options: SequencerOptions,
  ) {}

  submit(leaf: Omit<NewLeaf, 'leaf_index'>): Promise<Sequenced> {
    return new Promise((resolve, reject) => {
      this.#queue.push({
        leaf,
        at: Date.now(),
        traceparent: currentTraceparent(),
        span: currentSpanContext(),
        resolve,
        reject,
      })
      this.#schedule()
    })
  }

  /** Integrates whatever is queued; resolves when the queue is empty. */
  async drain(): Promise<void> {
    while (this.#queue.length || this.#running) {
      clearTimeout(this.#timer)
      this.#timer = undefined
      await (this.#running ?? this.#run())
    }
  }

  #schedule() {
    if (this.#running || this.#timer) return
    if (this.#queue.length >= this.options.batchMax) void this.#run()
    else this.#timer = setTimeout(() => void this.#run(), this.options.batchWaitMs)
  }

  #run(): Promise<void> {
    this.#timer = undefined
    this.#running = (async () => {
      const batch = this.#queue.splice(0, this.options.batchMax)
      try {
        const results = await withStoredParent(
          undefined,
          batch[0]!.traceparent,
          'ledger batch',
          { 'svc.ledger.batch_size': batch.length },
          () => this.#integrate(batch.map((p) => p.leaf)),
          {
            kind: SpanKind.INTERNAL,
            links: batch.flatMap((p) => (p.span ? [{ context: p.span }] : [])),
          },
        )
        this.options.observe?.(batch.length, Date.now() - batch[0]!.at)
        batch.forEach((p, i) => p.resolve(results[i]!))
      } catch (err) {
        this.options.log.error({ err }, 'batch integration failed')
        for (const p of batch) p.reject(err as Error)
      } finally {
        this.#running = undefined
        // what queued during this batch has waited long enough: integrate it at once
        if (this.#queue.length) void this.#run()
      }
    })()
    return this.#running
  }

  async #integrate(leaves: Array<Omit<NewLeaf, 'leaf_index'>>): Promise<Sequenced[]> {
    const { results, size, grew } = await this.db.transaction().execute(async (trx) => {
      const tree = await lockTree(trx)
      const known = await indicesOf(
        trx,
        leaves.map((l) => l.leaf_hash),
      )
      const fresh: NewLeaf[] = []
      const results = leaves.map((leaf): Sequenced => {
        const hex = leaf.leaf_hash.toString('hex')
        const existing = known.get(hex)
        if (existing !== undefined)
          return { index: existing, leafHash: leaf.leaf_hash, treeSize: 0, duplicate: true }
        const index = tree.size + fresh.length
        known.set(hex, index)
        fresh.push({ ...leaf, leaf_index: index })
        return { index, leafHash: leaf.leaf_hash, treeSize: 0, duplicate: false }
      })
      const size = tree.size + fresh.length
      if (fresh.length) {
        await insertLeaves(trx, fresh)
        const nodes = await appendLeaves(
          tree.size,
          fresh.map((l) => new Uint8Array(l.leaf_hash)),
          nodeReader(trx),
        )
        await insertNodes(trx, nodes)
        const pending = new Map<string, Hash>(nodes.map((n) => [`${n.level}/${n.index}`, n.hash]))
        const root = await treeRoot(size, nodeReader(trx, pending))
        await setTree(trx, size, root)
        await withSpan('ledger checkpoint', { 'svc.ledger.tree_size': size }, async () => {
          const text = formatCheckpoint({ origin: this.options.origin, size, rootHash: root, extensions: [] })
          await insertCheckpoint(trx, size, root, signNote(text, [this.options.signer]))
        })
        await this.options.onBatch?.(trx, tree.size, size)
      }
      return { results, size, grew: fresh.length > 0 }
    })
    if (grew) this.options.onPublished?.(size)
    return results.map((r) => ({ ...r, treeSize: size }))
  }
}
