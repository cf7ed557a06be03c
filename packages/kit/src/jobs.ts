import { CompiledQuery, type Kysely } from 'kysely'
import PgBoss from 'pg-boss'
import { type Database, jobsSchema } from './db/database.ts'

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

export interface EnqueueOptions extends RetryPolicy {
  startAfter?: Date | number
  singletonKey?: string
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

/**
 * Background jobs on the service's own database (pg-boss 10). Enqueue takes the caller's executor,
 * so a job enqueued inside a transaction exists exactly when that transaction commits.
 */
export class Jobs {
  readonly #boss: PgBoss
  readonly #queues = new Set<string>()

  private constructor(boss: PgBoss) {
    this.#boss = boss
  }

  static async start(
    database: Database,
    options: { onError?: (err: Error) => void; pollingIntervalSeconds?: number } = {},
  ): Promise<Jobs> {
    const boss = new PgBoss({
      db: adapter(database.db as Executor),
      schema: jobsSchema(database.schema),
      supervise: true,
      schedule: false,
      maintenanceIntervalSeconds: 120,
      monitorStateIntervalSeconds: 60,
    })
    boss.on('error', (err) => options.onError?.(err))
    await boss.start()
    return new Jobs(boss)
  }

  /** Declares a queue with its default retry policy; safe to call on every start. */
  async queue(name: string, policy: RetryPolicy = {}): Promise<void> {
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
    const id = await this.#boss.send(name, data, { ...options, db: adapter(executor) })
    if (!id) throw new Error(`job on ${name} was not created (singleton key already queued?)`)
    return id
  }

  /**
   * Runs a handler for each job of a queue; a handler that throws fails that job's attempt, and
   * the queue's policy retries it. pg-boss waits its polling interval between fetches even when
   * jobs are waiting, so a queue that must keep up takes `batchSize` jobs per fetch and runs them
   * together, each failing or completing on its own.
   */
  async work<T extends object>(
    name: string,
    handler: (data: T, job: JobInfo) => Promise<void>,
    options: { pollingIntervalSeconds?: number; batchSize?: number } = {},
  ): Promise<void> {
    if (!this.#queues.has(name)) throw new Error(`queue ${name} was not declared`)
    await this.#boss.work<T>(
      name,
      {
        batchSize: options.batchSize ?? 1,
        includeMetadata: true,
        pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
      },
      async (jobs) => {
        const outcomes = await Promise.allSettled(
          jobs.map((job) => handler(job.data, { id: job.id, name: job.name, retryCount: job.retryCount })),
        )
        if (jobs.length === 1 && outcomes[0]?.status === 'rejected') throw outcomes[0].reason
        // pg-boss completes the batch's jobs still active: those failed here are retried by the policy
        for (const [i, outcome] of outcomes.entries())
          if (outcome.status === 'rejected')
            await this.#boss.fail(name, jobs[i]!.id, {
              message: (outcome.reason as Error)?.message ?? String(outcome.reason),
            })
      },
    )
  }

  async job(name: string, id: string) {
    return this.#boss.getJobById(name, id)
  }

  async stop(): Promise<void> {
    await this.#boss.stop({ graceful: true, wait: true, timeout: 10_000, close: false })
  }
}
