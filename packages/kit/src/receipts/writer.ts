import { randomBytes } from 'node:crypto'
import { Gauge, type Registry } from 'prom-client'
import { b64Encode, b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash } from '@svc/trust/merkle'
import { afterCommit } from '../db/transaction.ts'
import type { Jobs } from '../jobs.ts'
import { currentTraceparent, withSpan, withStoredParent } from '../tracing.ts'
import { batched } from './batched.ts'
import {
  type AnyDb,
  insertOutbox,
  type OutboxRow,
  installOutbox,
  markDelivered,
  markFailed,
  outboxBacklog,
  outboxByIds,
  outboxSince,
  pendingOutbox,
} from './outbox-store.ts'

export const DELIVERY_QUEUE = 'receipts.deliver'
/** The lease of a taken delivery job: a crashed process's deliveries are retried after it. */
const DELIVERY_LEASE_S = 30
/** One call to the ledger: well inside the lease. */
const DELIVERY_TIMEOUT_MS = 10_000
const SWEEP_BATCH = 50

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
}

export interface Discrepancy {
  id: string
  type: string
  subject: string
  created_at: string
  ledger_index: number | null
  reason: 'not_delivered' | 'rejected' | 'missing_on_ledger' | 'leaf_mismatch' | 'ledger_unreachable'
  detail: string
}

class Permanent extends Error {}

/**
 * How a service records receipts: `record` signs the receipt and writes it to the outbox in the
 * caller's transaction, with the job that delivers it, so a receipt exists exactly when the action
 * it records commits. Delivery retries with backoff; `reconcile` lists what the ledger lacks.
 */
export class ReceiptWriter {
  constructor(private readonly options: ReceiptWriterOptions) {}

  // the deliveries of one fetched batch run together: their rows read, and those the ledger took
  // marked, in one statement each (per turn of the event loop)
  readonly #row = batched((ids: string[]) => outboxByIds(this.options.db, ids))
  readonly #delivered = batched(async (done: Array<{ id: string; index: number }>) => {
    await markDelivered(this.options.db, done)
    return done.map(() => undefined)
  })

  /**
   * Installs the outbox, starts the delivery worker, and (in the background) delivers at once what
   * the outbox holds undelivered from before this start: after a crash, the jobs a killed process
   * had taken stay leased for `DELIVERY_LEASE_S`, but the outbox is the source of truth. Delivering
   * a receipt twice is harmless: the ledger answers a second append of the same entry with its
   * existing index (`duplicate: true`), so it is logged once.
   */
  async start(options: { onError?: (err: Error) => void; metrics?: Registry } = {}): Promise<void> {
    const startedAt = new Date()
    if (options.metrics) this.#registerMetrics(options.metrics)
    await installOutbox(this.options.db)
    await this.options.jobs.queue(DELIVERY_QUEUE, {
      retryLimit: 8,
      retryDelay: 2,
      retryBackoff: true,
      expireInSeconds: DELIVERY_LEASE_S,
    })
    await this.options.jobs.work<{ id: string }>(DELIVERY_QUEUE, (data) => this.deliver(data.id), {
      pollingIntervalSeconds: 0.5,
      // the ledger pools concurrent appends into one batch: up to 50 receipts go at once
      batchSize: SWEEP_BATCH,
    })
    this.swept = this.#sweep(startedAt).catch((err: Error) => options.onError?.(err))
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
  }

  /** Settles when the start-up delivery of earlier pending receipts has run (for tests). */
  swept: Promise<void> = Promise.resolve()

  async #sweep(before: Date) {
    const tried = new Set<string>()
    for (;;) {
      const ids = (await pendingOutbox(this.options.db, before, SWEEP_BATCH + tried.size)).filter(
        (id) => !tried.has(id),
      )
      if (ids.length === 0) return
      for (const id of ids) tried.add(id)
      // a failed attempt is recorded on the row; its job retries it later
      await Promise.allSettled(ids.map((id) => this.deliver(id)))
    }
  }

  /** Signs and records a receipt in `trx`; delivered after commit. */
  record(trx: AnyDb, input: ReceiptInput) {
    return withSpan('receipt record', { 'svc.receipt.type': input.type }, () => this.#record(trx, input))
  }

  async #record(trx: AnyDb, input: ReceiptInput) {
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
    const traceparent = currentTraceparent()
    await insertOutbox(trx, {
      id,
      receipt_type: input.type,
      subject: input.subject,
      envelope,
      leaf_hash: hash,
      ...(traceparent ? { traceparent } : {}),
    })
    await this.options.jobs.enqueue(trx, DELIVERY_QUEUE, { id })
    // delivered as soon as the caller's transaction commits, not at the next poll
    afterCommit(trx, () => this.options.jobs.wake(DELIVERY_QUEUE))
    return { id, envelope, leafHash: b64Encode(hash) }
  }

  /** One delivery attempt: a refusal by the ledger (4XX) is final and kept for reconcile; anything else retries. */
  async deliver(id: string): Promise<void> {
    const row = await this.#row(id)
    if (!row || row.delivered_at || row.rejected) return
    // a span of the trace that recorded the receipt, however late (a retry after a ledger outage,
    // or the start-up sweep after a restart, which runs outside any request or job)
    return withStoredParent(
      this.options.jobs.tracer,
      row.traceparent,
      'receipt deliver',
      { 'svc.receipt.type': row.receipt_type, 'svc.receipt.attempt': row.attempts + 1 },
      () => this.#deliverRow(row),
    )
  }

  async #deliverRow(row: OutboxRow): Promise<void> {
    const { db, ledgerUrl, token } = this.options
    const { id } = row
    try {
      const res = await fetch(`${ledgerUrl}/v1/receipts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(row.envelope),
        signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
      })
      const body = (await res.json().catch(() => ({}))) as {
        index?: number
        error?: { code?: string; message?: string }
      }
      if (res.ok && typeof body.index === 'number') return await this.#delivered({ id, index: body.index })
      const reason =
        `ledger answered ${res.status} ${body.error?.code ?? ''}: ${body.error?.message ?? ''}`.trim()
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429)
        throw new Permanent(reason)
      throw new Error(reason)
    } catch (err) {
      const permanent = err instanceof Permanent
      await markFailed(db, id, (err as Error).message, permanent)
      if (!permanent) throw err
    }
  }

  /** Receipts recorded in the last `hours` that the ledger does not hold, each with the reason. */
  async reconcile(hours: number): Promise<Discrepancy[]> {
    const since = new Date((this.options.now?.() ?? new Date()).getTime() - hours * 3600_000)
    const rows = await outboxSince(this.options.db, since)
    const found: Discrepancy[] = []
    for (const row of rows) {
      const report = (reason: Discrepancy['reason'], detail: string) =>
        found.push({
          id: row.id,
          type: row.receipt_type,
          subject: row.subject,
          created_at: row.created_at.toISOString(),
          ledger_index: row.ledger_index,
          reason,
          detail,
        })
      if (row.rejected) report('rejected', row.last_error ?? 'refused by the ledger')
      else if (row.ledger_index === null)
        report('not_delivered', row.last_error ?? `not yet delivered (${row.attempts} attempts)`)
      else {
        const check = await this.#ledgerHas(row.ledger_index, row.leaf_hash)
        if (check) report(check.reason, check.detail)
      }
    }
    return found
  }

  async #ledgerHas(index: number, hash: Buffer): Promise<Pick<Discrepancy, 'reason' | 'detail'> | undefined> {
    try {
      const res = await fetch(`${this.options.ledgerUrl}/v1/entries/${index}`, {
        signal: AbortSignal.timeout(5_000),
      })
      if (res.status === 404)
        return { reason: 'missing_on_ledger', detail: `the ledger has no entry at index ${index}` }
      if (!res.ok) return { reason: 'ledger_unreachable', detail: `the ledger answered ${res.status}` }
      const entry = (await res.json()) as { leaf_hash: string }
      if (entry.leaf_hash !== b64Encode(hash))
        return {
          reason: 'leaf_mismatch',
          detail: `index ${index} holds another receipt (${entry.leaf_hash})`,
        }
      return undefined
    } catch (err) {
      return { reason: 'ledger_unreachable', detail: (err as Error).message }
    }
  }
}
