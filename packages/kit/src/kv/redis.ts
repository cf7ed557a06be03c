import { Redis } from 'ioredis'
import { KvUnavailable, type Kv } from './kv.ts'

// INCR and the first increment's PEXPIRE in one atomic step, so a window can never lose its TTL.
const INCREMENT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

export interface RedisKvOptions {
  onError?: (err: Error) => void
  /** How long one command may take before it fails with `KvUnavailable`; default 1000. */
  commandTimeoutMs?: number
}

/**
 * The shared store: every instance of a service sees the same keys. A dead or silent Redis fails
 * each command fast (`KvUnavailable`) instead of queueing it: commands are not queued while
 * disconnected, not retried, and time out after `commandTimeoutMs`; the client reconnects by itself.
 */
export class RedisKv implements Kv {
  readonly backend = 'redis'
  readonly #redis: Redis
  readonly #timeoutMs: number
  readonly #connected: Promise<void>

  constructor(url: string, prefix: string, options: RedisKvOptions = {}) {
    this.#timeoutMs = options.commandTimeoutMs ?? 1_000
    this.#redis = new Redis(url, {
      keyPrefix: `${prefix}:`,
      lazyConnect: false,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      connectTimeout: 2_000,
      commandTimeout: this.#timeoutMs,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    })
    this.#redis.on('error', (err) => options.onError?.(err))
    // the first commands of a process may come before the first connection is ready
    this.#connected = new Promise((resolve) => {
      const timer = setTimeout(resolve, 2_000).unref()
      this.#redis.once('ready', () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  async #call<T>(command: () => Promise<T>): Promise<T> {
    await this.#connected
    let timer: NodeJS.Timeout | undefined
    try {
      return await Promise.race([
        command(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('Command timed out')), this.#timeoutMs + 100)
        }),
      ])
    } catch (err) {
      throw new KvUnavailable((err as Error).message)
    } finally {
      clearTimeout(timer)
    }
  }

  async get(key: string) {
    return this.#call(() => this.#redis.get(key))
  }

  async set(key: string, value: string, ttlMs?: number) {
    await this.#call(() =>
      ttlMs === undefined
        ? this.#redis.set(key, value)
        : this.#redis.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs))),
    )
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    const answer = await this.#call(() =>
      this.#redis.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX'),
    )
    return answer === 'OK'
  }

  async increment(key: string, ttlMs: number) {
    return Number(await this.#call(() => this.#redis.eval(INCREMENT, 1, key, Math.max(1, Math.ceil(ttlMs)))))
  }

  async delete(key: string) {
    await this.#call(() => this.#redis.del(key))
  }

  async ping() {
    try {
      return (await this.#call(() => this.#redis.ping())) === 'PONG'
    } catch {
      return false
    }
  }

  async close() {
    await this.#redis.quit().catch(() => this.#redis.disconnect())
  }
}
