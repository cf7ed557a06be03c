import { randomBytes } from 'node:crypto'
import { Counter, Gauge, type Registry } from 'prom-client'
import { b64Encode, b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'
import { inTransaction, onCommit } from '../db/transaction.ts'
import type { Jobs } from '../jobs.ts'
import { Pace } from '../pace.ts'
import { currentTraceparent, withSpan, withStoredParent } from '../tracing.ts'
import { batched } from '../batched.ts'
import { type Discrepancy, reconcile } from './reconcile.ts'
import {
  type AnyDb,
  insertOutbox,
  type OutboxRow,
  installOutbox,
  markDelivered,
  markFailed,
  outboxBacklog,
  outboxByIds,
  type PendingReceipt,
  takePending,
} from './outbox-store.ts'

/** The retries of a receipt whose first delivery failed (only then is a job enqueued). */
export const DELIVERY_QUEUE = 'receipts.deliver'
/** The lease of a taken retry job, and of receipts a sweep took: a crashed process's are taken again after it. */
const DELIVERY_LEASE_S = 30
/** One call to the ledger: well inside the lease. */
const DELIVERY_TIMEOUT_MS = 10_000
/** The first retry's delay (the queue doubles it on each further one). */
const RETRY_DELAY_S = 2
const SWEEP_BATCH = 50
/** How often each instance sweeps the outbox for receipts nobody delivered (a process killed after its commit). */
const SWEEP_EVERY_MS = 10_000
/** How often at rest (nothing recorded here for a while): another instance's leftovers wait at most this long. */
const SWEEP_RESTING_MS = 60_000
/** A receipt is the sweep's once this old: longer than its recording process's own delivery may take. */
const SWEEP_AFTER_S = 15
/**
 * Receipts committed within this window are sent together, so that the ledger integrates them in
 * one batch: one transaction, one signed checkpoint and one witness round for all of them, where
 * sending each at its commit cost the ledger and the witness one of each per receipt.
 */
const GATHER_MS = 20
/** A gathering this large is sent at once. */
const GATHER_MAX = 50
/** How long `stop` waits for deliveries under way: what it leaves is swept by the next start or another instance. */
const STOP_WAIT_MS = 2_000

export type { Discrepancy } from './reconcile.ts'

export interface ReceiptInput {
  type: string
  v?: number
  subject: string
  data?: Record<string, unknown>
}

export interface ReceiptWriterOptions {
  db: AnyDb
  jobs: Jobs
  ledgerUrl: string
  /** The writer's bearer token at the ledger. */
  token: string
  /** The issuer: its did:key and the Ed25519 seed behind it. */
  issuer: { did: string; seed: Uint8Array }
  now?: () => Date
  /** The periodic sweep: how often, and from what age a receipt is taken (tests shorten them). */
  sweep?: { everyMs?: number; afterS?: number }
}

class Permanent extends Error {}

interface LedgerAnswer {
  index?: number
  error?: { code?: string; message?: string }
}

/** Why the ledger did not take a receipt: final (Permanent) when it refused it, else to retry. */
function refusal(status: number, error: LedgerAnswer['error']): Error {
  const reason = `ledger answered ${status} ${error?.code ?? ''}: ${error?.message ?? ''}`.trim()
  return status >= 400 && status < 500 && status !== 408 && status !== 429
    ? new Permanent(reason)
    : new Error(reason)
}

/**
 * How a service records receipts: `record` signs the receipt and writes it to the outbox in the
 * caller's transaction, so a receipt exists exactly when the action it records commits. Once that
 * transaction has committed, this process delivers it; only a failed delivery enqueues a job that
 * retries it with backoff, and each instance's periodic sweep delivers what a killed process left.
 * `reconcile` lists what the ledger lacks. Delivering a receipt twice is harmless: the ledger
 * answers a second append of the same entry with its existing index (`duplicate: true`).
 */
export class ReceiptWriter {
  /** The sweep's period: SWEEP_EVERY_MS while receipts are recorded here, SWEEP_RESTING_MS at rest. */
  readonly #sweepPace: Pace

  constructor(private readonly options: ReceiptWriterOptions) {
    const everyMs = options.sweep?.everyMs
    this.#sweepPace = new Pace({ busyMs: everyMs ?? SWEEP_EVERY_MS, restMs: everyMs ?? SWEEP_RESTING_MS })
  }

  // rows read for retries, and receipts the ledger took marked, in one statement per batch: what
  // arrives while one runs goes in the next
  readonly #row = batched((ids: string[]) => outboxByIds(this.options.db, ids))
  readonly #delivered = batched(async (done: Array<{ id: string; index: number }>) => {
    await markDelivered(this.options.db, done)
    return done.map(() => undefined)
  })
  readonly #inFlight = new Set<Promise<void>>()
  #gathered: PendingReceipt[] = []
  #gathering: NodeJS.Timeout | undefined
  #sweeper: NodeJS.Timeout | undefined
  #stopped = false
  #onError: (err: Error) => void = () => {}
  #failures: Counter | undefined

  /**
   * Installs the outbox, starts the retry worker and the periodic sweep, and (in the background)
   * delivers at once what the outbox holds undelivered from before this start, retried or not.
   */
  async start(options: { onError?: (err: Error) => void; metrics?: Registry } = {}): Promise<void> {
    const startedAt = new Date()
    if (options.onError) this.#onError = options.onError
    if (options.metrics) this.#registerMetrics(options.metrics)
    await installOutbox(this.options.db)
    await this.options.jobs.queue(DELIVERY_QUEUE, {
      retryLimit: 8,
      retryDelay: RETRY_DELAY_S,
      retryBackoff: true,
      expireInSeconds: DELIVERY_LEASE_S,
    })
    await this.options.jobs.work<{ id: string }>(DELIVERY_QUEUE, (data) => this.deliver(data.id), {
      pollingIntervalSeconds: 0.5,
      batchSize: SWEEP_BATCH,
    })
    this.swept = this.#sweep({ before: startedAt, untriedOnly: false })
      .catch((err: Error) => this.#onError(err))
      .finally(() => this.#sweepLater())
  }

  /**
   * Stops the sweep, sends what is gathered, and waits a little for the deliveries under way: a
   * receipt still undelivered is in the outbox, for the next start's or another instance's sweep.
   */
  async stop(): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#sweeper)
    this.#sendGathered()
    let waited: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.allSettled([this.swept, ...this.#inFlight]),
      new Promise((resolve) => (waited = setTimeout(resolve, STOP_WAIT_MS))),
    ])
    clearTimeout(waited)
  }

  /** The outbox's backlog, read at each scrape (one indexed statement): what an operator alerts on. */
  #registerMetrics(registry: Registry) {
    const db = this.options.db
    let read: Promise<{ waiting: number; oldestAgeS: number }> | undefined
    // both gauges are collected together at a scrape: one statement for the two
    const backlog = () =>
      (read ??= outboxBacklog(db)
        .catch(() => ({ waiting: 0, oldestAgeS: 0 }))
        .finally(() => setImmediate(() => (read = undefined))))
    new Gauge({
      name: 'receipt_outbox_waiting',
      help: 'Receipts recorded but not yet on the ledger (neither delivered nor refused)',
      registers: [registry],
      async collect() {
        this.set((await backlog()).waiting)
      },
    })
    new Gauge({
      name: 'receipt_outbox_oldest_age_seconds',
      help: 'Age of the oldest receipt waiting for the ledger (0 when none waits)',
      registers: [registry],
      async collect() {
        this.set((await backlog()).oldestAgeS)
      },
    })
    this.#failures = new Counter({
      name: 'receipt_delivery_failures_total',
      help: 'Attempts to deliver a receipt to the ledger that failed (retried, unless the ledger refused it)',
      registers: [registry],
    })
  }

  /** Settles when the start-up delivery of earlier pending receipts has run (for tests). */
  swept: Promise<void> = Promise.resolve()

  #sweepLater() {
    if (this.#stopped) return
    this.#sweeper = setTimeout(() => {
      const afterS = this.options.sweep?.afterS ?? SWEEP_AFTER_S
      this.swept = this.#sweep({ before: { secondsAgo: afterS }, untriedOnly: true })
        .catch((err: Error) => this.#onError(err))
        .finally(() => this.#sweepLater())
    }, this.#sweepPace.next())
    this.#sweeper.unref()
  }

  /**
   * Delivers the receipts nobody is delivering: those recorded before this start (all of them), or
   * (every SWEEP_EVERY_MS while receipts are recorded here, SWEEP_RESTING_MS at rest) those never
   * attempted that are older than SWEEP_AFTER_S. Each batch is taken with a lease, skipping what
   * another instance's sweep holds.
   */
  async #sweep(q: { before: Date | { secondsAgo: number }; untriedOnly: boolean }) {
    while (!this.#stopped) {
      const rows = await takePending(this.options.db, { ...q, leaseS: DELIVERY_LEASE_S, limit: SWEEP_BATCH })
      if (rows.length === 0) return
      // a failed attempt is recorded on the row, with its retry job when it was the first
      await this.#attemptTogether(rows)
    }
  }

  /** Signs and records a receipt in `trx`; delivered once it commits. */
  record(trx: AnyDb, input: ReceiptInput) {
    return withSpan('receipt record', { 'svc.receipt.type': input.type }, () => this.#record(trx, input))
  }

  async #record(trx: AnyDb, input: ReceiptInput) {
    this.#sweepPace.busy()
    const { issuer } = this.options
    const receipt = {
      type: input.type,
      v: input.v ?? 1,
      issuer: issuer.did,
      subject: input.subject,
      issued_at: (this.options.now?.() ?? new Date()).toISOString(),
      ...(input.data ? { data: input.data } : {}),
    }
    const envelope = { receipt, signature: b64uEncode(signEd25519(issuer.seed, canonicalBytes(receipt))) }
    const id = `rcp_${randomBytes(12).toString('base64url')}`
    const hash = Buffer.from(leafHash(canonicalBytes(envelope)))
    const traceparent = currentTraceparent() ?? null
    await insertOutbox(trx, {
      id,
      receipt_type: input.type,
      subject: input.subject,
      envelope,
      leaf_hash: hash,
      ...(traceparent ? { traceparent } : {}),
    })
    const pending: PendingReceipt = { id, receipt_type: input.type, envelope, attempts: 0, traceparent }
    // delivered from here once the transaction commits (never before: it could still roll back)
    if (!onCommit(trx, () => this.#deliverNow(pending))) {
      // outside a transaction the row is already committed; in one opened elsewhere, whose commit
      // this cannot see, the delivery is a job that exists when that transaction commits
      if (trx.isTransaction) await this.options.jobs.enqueue(trx, DELIVERY_QUEUE, { id })
      else this.#deliverNow(pending)
    }
    return { id, envelope, leafHash: b64Encode(hash) }
  }

  /**
   * The direct delivery after the commit, in the background and gathered with the others of a
   * short window (a failure is on the row and retried).
   */
  #deliverNow(receipt: PendingReceipt) {
    this.#gathered.push(receipt)
    if (this.#gathered.length >= GATHER_MAX || this.#stopped) this.#sendGathered()
    else this.#gathering ??= setTimeout(() => this.#sendGathered(), GATHER_MS)
  }

  #sendGathered() {
    clearTimeout(this.#gathering)
    this.#gathering = undefined
    const taken = this.#gathered
    this.#gathered = []
    if (taken.length === 0) return
    const sending = this.#attemptTogether(taken)
    this.#inFlight.add(sending)
    void sending.finally(() => this.#inFlight.delete(sending))
  }

  /**
   * One attempt for each of `rows`, in one request to the ledger (its batch append), so that it
   * integrates them together; each attempt is still a span of its own receipt's trace.
   */
  #attemptTogether(rows: PendingReceipt[]): Promise<void> {
    let sent: Promise<Array<number | Error>> | undefined
    const send = () =>
      (sent ??= this.#appendAll(rows.map((row) => row.envelope)).catch((err: Error) => rows.map(() => err)))
    const attempts = rows.map((row, i) =>
      this.#attempt(
        row,
        false,
        rows.length === 1
          ? undefined
          : async () => {
              const outcome = (await send())[i]!
              if (outcome instanceof Error) throw outcome
              return outcome
            },
      ),
    )
    return Promise.allSettled(attempts).then(() => {})
  }

  /** One retry (the queue's job): a refusal by the ledger (4XX) is final and kept for reconcile; anything else retries. */
  async deliver(id: string): Promise<void> {
    const row = await this.#row(id)
    if (!row || row.delivered_at || row.rejected) return
    return this.#attempt(row, true)
  }

  /**
   * One delivery attempt, as a span of the trace that recorded the receipt, however late (a retry
   * after a ledger outage, or a sweep, runs outside any request or job). A receipt's first failed
   * attempt, unless a job runs it, enqueues its retries with the failure, in one transaction.
   */
  #attempt(
    row: PendingReceipt,
    retried: boolean,
    append: () => Promise<number> = () => this.#append(row.envelope),
  ): Promise<void> {
    return withStoredParent(
      this.options.jobs.tracer,
      row.traceparent,
      'receipt deliver',
      { 'svc.receipt.type': row.receipt_type, 'svc.receipt.attempt': row.attempts + 1 },
      async () => {
        try {
          await this.#delivered({ id: row.id, index: await append() })
        } catch (err) {
          this.#failures?.inc()
          const permanent = err instanceof Permanent
          const message = (err as Error).message
          if (permanent || retried || row.attempts > 0)
            await markFailed(this.options.db, row.id, message, permanent)
          else
            await inTransaction(this.options.db, async (trx) => {
              await markFailed(trx, row.id, message, false)
              await this.options.jobs.enqueue(
                trx,
                DELIVERY_QUEUE,
                { id: row.id },
                { startAfter: RETRY_DELAY_S },
              )
            })
          if (!permanent) throw err
        }
      },
    )
  }

  /** Appends the receipt at the ledger: its index, or why not (Permanent when the ledger refused it). */
  async #append(envelope: OutboxRow['envelope']): Promise<number> {
    const { res, body } = await this.#post('/v1/receipts', envelope)
    if (res.ok && typeof body.index === 'number') return body.index
    throw refusal(res.status, body.error)
  }

  /**
   * Appends the receipts in one request (the ledger's batch append): for each, its index or why
   * not. A ledger without the batch append (404) is sent them one by one.
   */
  async #appendAll(envelopes: Array<OutboxRow['envelope']>): Promise<Array<number | Error>> {
    const { res, body } = await this.#post('/v1/receipts/batch', { receipts: envelopes })
    if (res.status === 404)
      return Promise.all(envelopes.map((envelope) => this.#append(envelope).catch((err: Error) => err)))
    if (!res.ok || !Array.isArray(body.results) || body.results.length !== envelopes.length) {
      const err = refusal(res.status, body.error)
      return envelopes.map(() => err)
    }
    return body.results.map((result) =>
      typeof result.index === 'number' ? result.index : refusal(400, result.error),
    )
  }

  async #post(path: string, payload: unknown) {
    const { ledgerUrl, token } = this.options
    const res = await fetch(`${ledgerUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    })
    const body = (await res.json().catch(() => ({}))) as LedgerAnswer & { results?: LedgerAnswer[] }
    return { res, body }
  }

  /** Receipts recorded in the last `hours` that the ledger does not hold, each with the reason. */
  reconcile(hours: number): Promise<Discrepancy[]> {
    const since = new Date((this.options.now?.() ?? new Date()).getTime() - hours * 3600_000)
    return reconcile(this.options.db, this.options.ledgerUrl, since)
  }
}
