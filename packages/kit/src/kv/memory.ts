import type { Kv } from './kv.ts'

interface Entry {
  value: string
  expiresAt: number
}

/** The in-process store: one instance only, everything lost on restart. */
export class MemoryKv implements Kv {
  readonly backend = 'memory'
  readonly #entries = new Map<string, Entry>()
  readonly #sweeper: NodeJS.Timeout
  readonly #now: () => number

  constructor(now: () => number = Date.now) {
    this.#now = now
    this.#sweeper = setInterval(() => this.#sweep(), 60_000)
    this.#sweeper.unref()
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry && entry.expiresAt <= this.#now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  #sweep() {
    const now = this.#now()
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key)
  }

  #expiry(ttlMs?: number) {
    return ttlMs === undefined ? Number.POSITIVE_INFINITY : this.#now() + ttlMs
  }

  async get(key: string) {
    return this.#live(key)?.value ?? null
  }

  async set(key: string, value: string, ttlMs?: number) {
    this.#entries.set(key, { value, expiresAt: this.#expiry(ttlMs) })
  }

  async setIfAbsent(key: string, value: string, ttlMs: number) {
    if (this.#live(key)) return false
    this.#entries.set(key, { value, expiresAt: this.#expiry(ttlMs) })
    return true
  }

  async increment(key: string, ttlMs: number) {
    const entry = this.#live(key)
    const count = entry ? Number(entry.value) + 1 : 1
    this.#entries.set(key, { value: String(count), expiresAt: entry?.expiresAt ?? this.#expiry(ttlMs) })
    return count
  }

  async delete(key: string) {
    this.#entries.delete(key)
  }

  async ping() {
    return true
  }

  async close() {
    clearInterval(this.#sweeper)
    this.#entries.clear()
  }
}
