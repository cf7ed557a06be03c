import { CompiledQuery, type Kysely } from 'kysely'
import PgBoss from 'pg-boss'
import { Counter, type Registry } from 'prom-client'
import type { Tracer } from '@opentelemetry/api'
import { type Database, jobsSchema } from './db/database.ts'
import { Pace, Pause } from './pace.ts'
import { currentTraceparent, withStoredParent } from './tracing.ts'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a job may be enqueued on any service's database or transaction
type Executor = Kysely<any>

export interface RetryPolicy {
  /** Attempts after the first; default 5. */
  retryLimit?: number
  /** Seconds before the first retry; default 2. */
  retryDelay?: number
  /** Doubles the delay on each retry (with jitter); default true. */
  retryBackoff?: boolean
}

export interface QueuePolicy extends RetryPolicy {
  /**
   * How long a taken job may stay active before it is failed and retried (pg-boss's default is 15
   * minutes): the lease a crashed process holds. The handler gets a little less, then fails.
   */
  expireInSeconds?: number
}

export interface EnqueueOptions extends RetryPolicy {
  /** A Date, or seconds from now (fractions allowed). */
  startAfter?: Date | number
  singletonKey?: string
  /** The job's id (a UUID), when the caller names it before the job exists. */
  id?: string
}

/** The watch's timing (tests shorten it): how long it stays busy after work here, how often it looks at rest. */
export interface WatchTiming {
  busyForMs?: number
  restMs?: number
}

export interface JobInfo {
  id: string
  name: string
  retryCount?: number
}

/** pg-boss's database adapter over a Kysely executor: the service's own connection or an open transaction. */
function adapter(executor: Executor): PgBoss.Db {
  return {
    async executeSql(text, values) {
      const result = await executor.executeQuery(CompiledQuery.raw(text, values ?? []))
      return { rows: result.rows as unknown[] }
    },
  }
}

/** How often the watch asks for due jobs while busy (a queue's polling interval, when shorter). */
const IDLE_WATCH_MS = 1000
/** How often it asks at rest (nothing enqueued, taken or failed here for a while): a job another process enqueues may wait this long. */
const REST_WATCH_MS = 30_000
/** A delayed job is fetched this long after its start, so that the database sees it due. */
const DUE_MARGIN_MS = 20
/** The longest an idle loop sleeps without the watch: a safety net, should a wake-up be lost. */
const IDLE_MAX_MS = 300_000
/** The creator's W3C traceparent, kept in the job's data and taken off before its handler sees it. */
const TRACE_FIELD = '_traceparent'

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err))

/** Rejects when `work` takes longer than `ms`, so a hung handler cannot outlive its job's lease. */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`job handler took longer than ${ms} ms`)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Background jobs on the service's own database (pg-boss 10). Enqueue takes the caller's executor,
 * so a job enqueued inside a transaction exists exactly when that transaction commits.
 *
 * The work loop is ours, not pg-boss's `work`: pg-boss does not await its `complete` and `fail`
 * calls, so a database outage while jobs run rejects them unhandled and ends the process. Here
 * every fetch, complete and fail is awaited and caught: during an outage the loop logs, backs off
 * and keeps going, and a job whose completion could not be written is retried after its lease.
 */
export class Jobs {
  readonly #boss: PgBoss
  readonly #queues = new Set<string>()
  readonly #loops: Array<{ name: string; pause: Pause; done: Promise<void> }> = []
  readonly #onError: (err: Error) => void
  readonly #due: (names: string[]) => Promise<{ due: string[]; nextInMs: number | undefined }>
  /** Loops whose last fetch found nothing, by queue: they sleep until the watch sees a job due. */
  readonly #idle = new Map<string, Set<Pause>>()
  #watch: Promise<void> | undefined
  readonly #watchPause = new Pause()
  #watchMs = IDLE_WATCH_MS
  readonly #pace: Pace
  readonly #tracer: Tracer | undefined
  readonly #failures: Counter<'queue'> | undefined
  #stopping = false

  private constructor(
    boss: PgBoss,
    onError: (err: Error) => void,
    database: Database,
    metrics: Registry | undefined,
    watch: WatchTiming = {},
  ) {
    this.#pace = new Pace({ busyMs: IDLE_WATCH_MS, restMs: REST_WATCH_MS, ...watch })
    this.#boss = boss
    this.#onError = onError
    this.#tracer = database.tracer
    this.#failures = metrics
      ? new Counter({
          name: 'jobs_failed_total',
          help: 'Job attempts that failed (each is retried by its queue’s policy until its retry limit)',
          labelNames: ['queue'] as const,
          registers: [metrics],
        })
      : undefined
    const table = `${jobsSchema(database.schema)}.job`
    const executor = database.db as Executor
    // the queues with a job due, and in how long the next delayed one falls due
    this.#due = async (names) => {
      const result = await executor.executeQuery<{ name: string; wait_ms: number | string }>(
        CompiledQuery.raw(
          `select name, extract(epoch from min(start_after) - now()) * 1000 as wait_ms from ${table}
            where name = any($1::text[]) and state < 'active' group by name`,
          [names],
        ),
      )
      const waits = result.rows.map((r) => ({ name: r.name, ms: Number(r.wait_ms) }))
      const later = waits.filter((w) => w.ms > 0).map((w) => w.ms)
      return {
        due: waits.filter((w) => w.ms <= 0).map((w) => w.name),
        nextInMs: later.length ? Math.min(...later) : undefined,
      }
    }
  }

  /** The service's tracer (undefined with tracing off): work outside a request or job joins its trace by it. */
  get tracer(): Tracer | undefined {
    return this.#tracer
  }

  static async start(
    database: Database,
    options: {
      onError?: (err: Error) => void
      maintenanceIntervalSeconds?: number
      /** The service's registry: `jobs_failed_total{queue}` counts failed attempts. */
      metrics?: Registry
      watch?: WatchTiming
    } = {},
  ): Promise<Jobs> {
    const onError = (err: Error) => {
      try {
        options.onError?.(err)
      } catch {}
    }
    const boss = new PgBoss({
      db: adapter(database.db as Executor),
      schema: jobsSchema(database.schema),
      supervise: true,
      schedule: false,
      // maintenance fails the jobs whose lease expired (a crashed process's) so they are retried
      maintenanceIntervalSeconds: options.maintenanceIntervalSeconds ?? 30,
      // no `monitor-states` listener here: pg-boss's count of every queue's states is not asked for
    })
    boss.on('error', onError)
    await boss.start()
    return new Jobs(boss, onError, database, options.metrics, options.watch)
  }

  /** Declares a queue with its default retry policy; safe to call on every start. */
  async queue(name: string, policy: QueuePolicy = {}): Promise<void> {
    const settings = { retryLimit: 5, retryDelay: 2, retryBackoff: true, ...policy }
    if (await this.#boss.getQueue(name)) await this.#boss.updateQueue(name, { name, ...settings })
    else await this.#boss.createQueue(name, { name, ...settings })
    this.#queues.add(name)
  }

  async enqueue(
    executor: Executor,
    name: string,
    data: object,
    options: EnqueueOptions = {},
  ): Promise<string> {
    if (!this.#queues.has(name)) throw new Error(`queue ${name} was not declared`)
    // the creator's context goes with the job: its run is a span of the same trace, however late
    const traceparent = this.#tracer && currentTraceparent()
    const sent = traceparent ? { ...data, [TRACE_FIELD]: traceparent } : data
    const id = await this.#boss.send(name, sent, { ...options, db: adapter(executor) })
    if (!id) throw new Error(`job on ${name} was not created (singleton key already queued?)`)
    // the job exists once its transaction commits, which the watch cannot be told: it looks often again
    this.#busy()
    return id
  }

  /**
   * Runs a handler for each job of a queue; a handler that throws (or outlives its job's lease)
   * fails that job's attempt, and the queue's policy retries it. A queue that must keep up takes
   * `batchSize` jobs per fetch and runs them together, each failing or completing on its own; a
   * full batch is followed at once by the next fetch, an empty one by the polling interval.
   */
  async work<T extends object>(
    name: string,
    handler: (data: T, job: JobInfo) => Promise<void>,
    options: { pollingIntervalSeconds?: number; batchSize?: number } = {},
  ): Promise<void> {
    if (!this.#queues.has(name)) throw new Error(`queue ${name} was not declared`)
    if (this.#stopping) throw new Error('jobs are stopping')
    const batchSize = options.batchSize ?? 1
    const intervalMs = (options.pollingIntervalSeconds ?? 1) * 1000
    const pause = new Pause()
    const loop = async () => {
      let failures = 0
      while (!this.#stopping) {
        let taken = 0
        try {
          const jobs = await this.#boss.fetch<T>(name, { batchSize, includeMetadata: true })
          taken = jobs?.length ?? 0
          if (jobs && taken) {
            this.#pace.busy()
            await this.#run(name, jobs, handler)
          }
          failures = 0
        } catch (err) {
          failures++
          this.#pace.busy()
          this.#onError(new Error(`jobs on ${name}: ${messageOf(err)}`))
        }
        if (this.#stopping) break
        // back off while the database fails (up to 10 s), wait for the watch while idle, go on while busy
        if (failures) await pause.sleep(Math.min(10_000, intervalMs * 2 ** Math.min(failures, 5)))
        else if (taken === 0) await this.#idleUntilDue(name, pause)
        else if (taken < batchSize) await pause.sleep(intervalMs)
      }
    }
    this.#watchMs = Math.min(this.#watchMs, intervalMs)
    this.#loops.push({ name, pause, done: loop() })
    this.#watch ??= this.#watchLoop()
  }

  /** An idle loop sleeps until the watch (or a wake) says its queue has a job due; at most IDLE_MAX_MS. */
  async #idleUntilDue(name: string, pause: Pause) {
    let waiting = this.#idle.get(name)
    if (!waiting) this.#idle.set(name, (waiting = new Set()))
    waiting.add(pause)
    try {
      await pause.sleep(IDLE_MAX_MS)
    } finally {
      waiting.delete(pause)
    }
  }

  /** Something here enqueued, took or failed a job: the watch looks every polling interval again. */
  #busy() {
    const resting = this.#pace.resting
    this.#pace.busy()
    // a watch asleep for its resting while shortens that sleep now
    if (resting && this.#watchPause.sleeping) this.#watchPause.wake()
  }

  /**
   * While loops are idle, one statement asks which of their queues have a job due (new, retried,
   * delayed past its start, another instance's) and when the next delayed one falls due, instead
   * of a fetch per queue. It asks every polling interval while this process enqueues or runs jobs,
   * every REST_WATCH_MS at rest (what a resting service costs: docs/performance.md), and wakes for
   * a delayed job when it falls due. A failed read wakes every idle loop, whose own fetch then
   * backs off as before.
   */
  async #watchLoop() {
    let nextInMs: number | undefined
    while (!this.#stopping) {
      const sleep = this.#pace.next(this.#watchMs)
      await this.#watchPause.sleep(nextInMs === undefined ? sleep : Math.min(sleep, nextInMs + DUE_MARGIN_MS))
      nextInMs = undefined
      const names = [...this.#idle].filter(([, waiting]) => waiting.size).map(([name]) => name)
      if (this.#stopping || names.length === 0) continue
      let due: string[]
      try {
        ;({ due, nextInMs } = await this.#due(names))
      } catch {
        due = names
      }
      for (const name of due) for (const pause of this.#idle.get(name) ?? []) pause.wake()
    }
  }

  async #run<T extends object>(
    name: string,
    jobs: Array<PgBoss.JobWithMetadata<T>>,
    handler: (data: T, job: JobInfo) => Promise<void>,
  ) {
    const outcomes = await Promise.allSettled(
      jobs.map((job) =>
        within(
          this.#handle(job, handler),
          // a little less than the lease, so the attempt is failed by us rather than by expiry
          Math.max(1000, (job.expireInSeconds ?? 900) * 1000 - 2000),
        ),
      ),
    )
    const completed = jobs.filter((_, i) => outcomes[i]!.status === 'fulfilled').map((job) => job.id)
    if (completed.length) await this.#settle(name, () => this.#boss.complete(name, completed))
    for (const [i, outcome] of outcomes.entries())
      if (outcome.status === 'rejected') {
        this.#failures?.inc({ queue: name })
        await this.#settle(name, () =>
          this.#boss.fail(name, jobs[i]!.id, { message: messageOf(outcome.reason) }),
        )
      }
  }

  /** Runs a job's handler, as a span of its creator's trace when tracing is on. */
  #handle<T extends object>(
    job: PgBoss.JobWithMetadata<T>,
    handler: (data: T, job: JobInfo) => Promise<void>,
  ) {
    const info = { id: job.id, name: job.name, retryCount: job.retryCount }
    let data = job.data
    let traceparent: string | undefined
    if (data && TRACE_FIELD in data) {
      const { [TRACE_FIELD]: stored, ...rest } = data as T & { [TRACE_FIELD]?: string }
      traceparent = stored
      data = rest as T
    }
    if (!this.#tracer) return handler(data, info)
    return withStoredParent(
      this.#tracer,
      traceparent,
      `job ${job.name}`,
      {
        'messaging.system': 'pg-boss',
        'messaging.destination.name': job.name,
        'svc.job.attempt': job.retryCount,
      },
      () => handler(data, info),
    )
  }

  /** Writes a job's outcome; when the database refuses, the job stays active until its lease expires, then is retried. */
  async #settle(name: string, write: () => Promise<unknown>) {
    try {
      await write()
    } catch (err) {
      this.#onError(new Error(`jobs on ${name}: could not record an outcome: ${messageOf(err)}`))
    }
  }

  /**
   * Ends the polling sleep of this process's workers on `name` (or their next one, when they are
   * fetching): for a caller that just committed a job, so that it runs now rather than at the next
   * poll. The poll stays the safety net (other instances, a missed wake-up).
   */
  wake(name: string): void {
    this.#busy()
    for (const loop of this.#loops) if (loop.name === name) loop.pause.wake()
  }

  async job(name: string, id: string) {
    return this.#boss.getJobById(name, id)
  }

  /** Stops fetching, lets the running handlers finish (10 s at most), then stops pg-boss. */
  async stop(): Promise<void> {
    this.#stopping = true
    this.#watchPause.wake()
    for (const loop of this.#loops) loop.pause.wake()
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all([...this.#loops.map((loop) => loop.done), this.#watch]),
      new Promise((resolve) => (timer = setTimeout(resolve, 10_000))),
    ])
    clearTimeout(timer)
    await this.#boss.stop({ graceful: true, wait: true, timeout: 10_000, close: false }).catch(this.#onError)
  }
}
