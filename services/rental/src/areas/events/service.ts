import { EventEmitter } from 'node:events'
import { afterCommit, batched, Pace, Pause } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import type { Compilable, OperationNodeSource } from 'kysely'
import { inTransaction, type RentalDb } from '../../db.ts'
import type { Actor } from './actor.ts'
import type { EventType } from './types.ts'
import { type Anchor, latestAnchor, linkAt } from './anchor-store.ts'
import { type ChainReport, chainEvents, verifyChain } from './chain.ts'
import {
  advanceConsumer,
  consumersBehind,
  type AuditFilter,
  auditEvents,
  type EventRow,
  deleteExpired,
  insertApartEvents,
  insertEvent,
  type EventInsert,
  insertEventBeside,
  insertStreamEvents,
  nextForConsumer,
  orgEvents,
  pseudonymiseEventsOf,
  streamEvents,
} from './store.ts'

/** An event to append: what happened, to what, by whom. */
export interface NewEvent {
  /** The organization it belongs to (null: the platform's own). */
  orgId: string | null
  /** One of EVENT_TYPES (what webhooks subscribe to), or the audit's `request.answered`. */
  type: EventType | 'request.answered'
  /** The stream it is numbered in (a task's id), if any. */
  stream?: string | undefined
  /** The ids it is about: `{ task_id, engagement_id, … }`. */
  subjects?: Record<string, string> | undefined
  actor: Actor
  data?: unknown
}

/** An event as readers see it. */
export interface EventView {
  id: string
  seq: number
  /** The writing transaction's id: with `seq`, the event's place in commit order (durable consumers). */
  txid: string
  org_id: string | null
  type: string
  stream: string | null
  stream_seq: number | null
  subjects: Record<string, string>
  actor: { type: string; id: string | null; ip: string | null; request_id: string | null }
  data: unknown
  created_at: string
}

export const eventView = (row: EventRow): EventView => ({
  id: `evt_${row.seq}`,
  seq: Number(row.seq),
  txid: row.txid,
  org_id: row.org_id,
  type: row.type,
  stream: row.stream,
  stream_seq: row.stream_seq,
  subjects: row.subjects as Record<string, string>,
  actor: { type: row.actor_type, id: row.actor_id, ip: row.ip, request_id: row.request_id },
  data: row.data,
  created_at: row.created_at.toISOString(),
})

/** A durable reader of the log: given each committed event once, in commit order, in its transaction. */
export type Consumer = (trx: RentalDb, events: EventView[]) => Promise<void>

const BATCH = 200
/** How long a woken consumer loop waits for more events before it reads them. */
const GATHER_MS = 50
/** How often the loop asks whether a consumer is behind while events flow here, and at rest. */
const POLL_MS = 1000
const RESTING_POLL_MS = 30_000

/** The durable consumer that chains the audit record (chain.ts). */
export const CHAIN_CONSUMER = 'audit-chain'

/** The log's writer, its stream readers, and its durable consumers' loop. */
/** An event's row: who did it and what, in the stream given. */
const rowOf = (event: Omit<NewEvent, 'stream'>, stream: string | null) => ({
  org_id: event.orgId,
  type: event.type,
  stream,
  subjects: event.subjects ?? {},
  actor_type: event.actor.type,
  actor_id: event.actor.id,
  ip: event.actor.ip ?? null,
  request_id: event.actor.requestId ?? null,
  data: event.data ?? {},
})

export class EventLog {
  readonly #committed = new EventEmitter().setMaxListeners(0)
  readonly #consumers = new Map<string, Consumer>()
  /** Paced consumers: at most one run per `everyMs` in the loop, and when each last ran there. */
  readonly #pace = new Map<string, { everyMs: number; lastRun: number }>()
  /** The consumers whose cursor row this process has made (or found) once. */
  readonly #cursorsMade = new Set<string>()
  #running = false
  #stopped = false
  /** The loop's sleep, ended by a commit here (or stop). */
  readonly #pause = new Pause()
  /** How often the loop polls when no commit here woke it: every second while events flow, rarely at rest. */
  readonly #polling = new Pace({ busyMs: POLL_MS, restMs: RESTING_POLL_MS })
  #loop: Promise<void> | undefined

  /** `manual`: consumers run only when `drain()` is called (tests), not in a loop. */
  constructor(
    private readonly ctx: Pick<RentalContext, 'db' | 'log'>,
    private readonly options: { manual?: boolean } = {},
  ) {}

  /**
   * Erasure: the organization's events keep their types, times and ids, but lose who acted (a
   * user's subject becomes `erased`), the IP and the personal fields of their data; in `trx`.
   */
  async eraseOrg(trx: RentalDb, orgId: string): Promise<number> {
    return pseudonymiseEventsOf(trx, orgId)
  }

  /** Appends `event` in `trx`; streams' waiters and consumers are woken once it commits. */
  async record(trx: RentalDb, event: NewEvent): Promise<{ id: string; streamSeq: number | null }> {
    const { seq, streamSeq } = await insertEvent(trx, rowOf(event, event.stream ?? null))
    afterCommit(trx, () => {
      if (event.stream) this.#committed.emit(event.stream)
      this.wakeConsumers()
    })
    return { id: `evt_${seq}`, streamSeq }
  }

  /**
   * Appends `event` (without a stream) on its own, outside any transaction: the events asked for
   * while one such insert runs go together in the next (one statement for the request records of
   * answers that end together). Consumers are woken once it is written.
   */
  async recordApart(event: Omit<NewEvent, 'stream'>): Promise<void> {
    const failed = await this.#apart(rowOf(event, null))
    if (failed) throw failed
  }

  // a failed insert of several is tried again one by one: a record's fault loses it alone
  readonly #apart = batched(async (rows: EventInsert[]): Promise<Array<Error | undefined>> => {
    const insert = (some: EventInsert[]) =>
      insertApartEvents(this.ctx.db, some).then(
        () => undefined,
        (err: Error) => err,
      )
    const failed = await insert(rows)
    const each = failed && rows.length > 1 ? await Promise.all(rows.map((r) => insert([r]))) : undefined
    this.wakeConsumers()
    return each ?? rows.map(() => failed)
  })

  /**
   * Runs `statement` (an insert of one row with RETURNING, e.g. the row the event is about) and
   * appends `event` in the same statement, in `trx`: the statement's row, and the event as `record`
   * answers it. Waiters and consumers are woken once it commits.
   */
  async recordBeside<R extends object>(
    trx: RentalDb,
    event: NewEvent & { stream: string },
    statement: Compilable<R> & OperationNodeSource,
  ): Promise<{ row: R; id: string; streamSeq: number }> {
    const { row, seq, streamSeq } = await insertEventBeside(
      trx,
      { ...rowOf(event, event.stream), stream: event.stream },
      statement,
    )
    afterCommit(trx, () => {
      this.#committed.emit(event.stream)
      this.wakeConsumers()
    })
    return { row, id: `evt_${seq}`, streamSeq }
  }

  /**
   * Appends several events of one stream in `trx` in one statement, in the order given (as
   * `record` one after the other would); waiters and consumers are woken once it commits.
   */
  async recordAll(
    trx: RentalDb,
    stream: string,
    events: readonly Omit<NewEvent, 'stream'>[],
  ): Promise<Array<{ id: string; streamSeq: number }>> {
    const rows = await insertStreamEvents(
      trx,
      stream,
      events.map((event) => rowOf(event, stream)),
    )
    afterCommit(trx, () => {
      this.#committed.emit(stream)
      this.wakeConsumers()
    })
    return rows.map((r) => ({ id: `evt_${r.seq}`, streamSeq: r.stream_seq }))
  }

  /** A stream's events after its `after`-th, oldest first. */
  async stream(stream: string, after: number, limit = BATCH): Promise<EventView[]> {
    return (await streamEvents(this.ctx.db, stream, after, limit)).map(eventView)
  }

  /** An organization's events, newest first. */
  async ofOrg(orgId: string, opts: { types?: string[]; beforeSeq?: number; limit: number }) {
    const rows = await orgEvents(this.ctx.db, orgId, { ...opts, beforeSeq: opts.beforeSeq?.toString() })
    return rows.map(eventView)
  }

  /** A page of the organization's record (GET /v1/audit), newest first, each with its chain link. */
  async audit(orgId: string, filter: Omit<AuditFilter, 'beforeSeq'> & { beforeSeq?: number | undefined }) {
    const rows = await auditEvents(this.ctx.db, orgId, {
      ...filter,
      beforeSeq: filter.beforeSeq?.toString(),
    })
    return rows.map((row) => ({
      ...eventView(row),
      chain: row.chain_pos === null ? null : { pos: Number(row.chain_pos), hash: row.chain_hash! },
    }))
  }

  /** Chains what has committed (the `audit-chain` consumer), then walks the organization's chain. */
  async verifyChain(orgId: string): Promise<ChainReport> {
    await this.drainOne(CHAIN_CONSUMER)
    return verifyChain(this.ctx.db, orgId, eventView)
  }

  /** The organization's latest published chain head (anchor.ts), and the stored link at a place. */
  latestAnchor(orgId: string): Promise<Anchor | null> {
    return latestAnchor(this.ctx.db, orgId)
  }

  linkAt(orgId: string, pos: number): Promise<string | null> {
    return linkAt(this.ctx.db, orgId, pos)
  }

  /** Starts the audit record's hash chain: every event, older ones too, is chained once committed. */
  startChain() {
    this.consume(CHAIN_CONSUMER, chainEvents)
  }

  /**
   * Resolves when an event of `stream` commits in this process, or after `ms` (another instance's
   * events are seen by the caller's next read): what a stream reader waits on between reads.
   */
  waitFor(stream: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.#committed.off(stream, done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.#committed.once(stream, done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  /**
   * Registers a durable consumer: from its first registration on, it is given every committed
   * event (older ones too: it filters what it wants), once, in commit order, in the transaction that
   * moves its cursor, so what it writes and its place in the log commit together. One instance runs a
   * consumer at a time. `everyMs`: the loop runs it at most once per that many milliseconds (its
   * events wait, durably, behind its cursor), so that one run takes a busy second's events at once;
   * `drain()` still runs it at once.
   */
  consume(name: string, consumer: Consumer, opts: { everyMs?: number } = {}) {
    this.#consumers.set(name, consumer)
    if (opts.everyMs) this.#pace.set(name, { everyMs: opts.everyMs, lastRun: 0 })
    this.#start()
  }

  /**
   * Retention: deletes in `trx` the organization's events written before `before` that every durable
   * consumer registered here has consumed (held engagements' skipped); answers their ids (`evt_<seq>`).
   */
  async deleteExpired(
    trx: RentalDb,
    orgId: string,
    before: Date,
    skipEngagements: readonly string[],
    limit: number,
  ): Promise<string[]> {
    const seqs = await deleteExpired(trx, orgId, before, [...this.#consumers.keys()], skipEngagements, limit)
    return seqs.map((seq) => `evt_${seq}`)
  }

  wakeConsumers() {
    this.#pause.wake()
  }

  async stop() {
    this.#stopped = true
    this.wakeConsumers()
    await this.#loop
  }

  /** Runs every consumer until it has nothing new; answers whether any took events. */
  async drain(): Promise<boolean> {
    let took = false
    for (const name of this.#consumers.keys()) if (await this.drainOne(name)) took = true
    return took
  }

  /**
   * The loop's drain: every consumer, but a paced one only once its interval has passed since its
   * last run; answers in how many milliseconds a paced consumer skipped now falls due (or undefined).
   */
  async #drainPaced(): Promise<{ deferred: number | undefined; took: boolean }> {
    let next: number | undefined
    let took = false
    for (const name of this.#consumers.keys()) {
      const pace = this.#pace.get(name)
      if (pace) {
        const wait = pace.lastRun + pace.everyMs - Date.now()
        if (wait > 0) {
          next = Math.min(next ?? wait, wait)
          continue
        }
        pace.lastRun = Date.now()
      }
      if (await this.drainOne(name)) took = true
    }
    return { deferred: next, took }
  }

  /** Runs one consumer until it has nothing new (or another caller holds its cursor). */
  async drainOne(name: string): Promise<boolean> {
    const consumer = this.#consumers.get(name)
    let took = false
    if (consumer)
      for (;;) {
        const ensure = !this.#cursorsMade.has(name)
        const n = await inTransaction(this.ctx.db, async (trx) => {
          const rows = await nextForConsumer(trx, name, BATCH, ensure)
          if (!rows?.length) return 0
          await consumer(trx, rows.map(eventView))
          const last = rows[rows.length - 1]!
          await advanceConsumer(trx, name, { txid: last.txid, seq: last.seq })
          return rows.length
        })
        // committed: the cursor row exists from now on
        this.#cursorsMade.add(name)
        if (n) took = true
        if (n < BATCH) break
      }
    return took
  }

  #start() {
    if (this.#running || this.options.manual) return
    this.#running = true
    this.#loop = (async () => {
      let due = true
      let deferred: number | undefined
      while (!this.#stopped) {
        try {
          if (due) {
            const drained = await this.#drainPaced()
            deferred = drained.deferred
            if (drained.took) this.#polling.busy()
          }
        } catch (err) {
          this.ctx.log.warn({ err: (err as Error).message }, 'event consumer failed; retried')
        }
        // a paced consumer skipped on this pass is run when its interval has passed
        const woken = await this.#pause.sleep(Math.min(this.#polling.next(), deferred ?? Infinity))
        if (this.#stopped) break
        // woken by a commit: events committed in the next moment are taken in the same batch, so
        // that a busy rental runs its consumers a few times a second, not once per event
        if (woken) {
          this.#polling.busy()
          await new Promise((r) => setTimeout(r, GATHER_MS).unref())
        }
        // the poll (another instance's events, a missed wake-up) asks first, in one statement,
        // whether any consumer is behind: a resting rental runs no consumer's transaction. It polls
        // every second while events flow here, every RESTING_POLL_MS at rest.
        due = woken || deferred !== undefined || (await this.#behind())
      }
    })()
  }

  async #behind() {
    try {
      return await consumersBehind(this.ctx.db, [...this.#consumers.keys()])
    } catch {
      // the drain's own error is the one worth logging
      return true
    }
  }
}
