import { Redis } from 'ioredis'
import type { Kv } from './kv.ts'

// INCR and the first increment's PEXPIRE in one atomic step, so a window can never lose its TTL.
const INCREMENT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`

/** The shared store: every instance of a service sees the same keys. */
export class RedisKv implements Kv {
  readonly backend = 'redis'
  readonly #redis: Redis

  constructor(url: string, prefix: string, onError?: (err: Error) => void) {
    this.#redis = new Redis(url, {
      keyPrefix: `${prefix}:`,
      lazyConnect: false,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      connectTimeout: 2_000,
    })
    this.#redis.on('error', (err) => onError?.(err))
  }

  async get(key: string) {
    return this.#redis.get(key)
  }

  async set(key: string, value: string, ttlMs?: number) {
    if (ttlMs === undefined) await this.#redis.set(key, value)
    else await this.#redis.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)))
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    return (await this.#redis.set(key, value, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK'
  }

  async increment(key: string, ttlMs: number) {
    return Number(await this.#redis.eval(INCREMENT, 1, key, Math.max(1, Math.ceil(ttlMs))))
  }

  async delete(key: string) {
    await this.#redis.del(key)
  }

  async ping() {
    try {
      return (await this.#redis.ping()) === 'PONG'
    } catch {
      return false
    }
  }

  async close() {
    await this.#redis.quit().catch(() => this.#redis.disconnect())
  }
}
