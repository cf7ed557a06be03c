import { AppError } from '../errors.ts'

/** A small key-value store for rate limits, replay caches and denylists. TTLs are in milliseconds. */
export interface Kv {
  readonly backend: 'memory' | 'redis'
  get(key: string): Promise<string | null>
  set(key: string, value: string, ttlMs?: number): Promise<void>
  /** Stores the value only if the key is absent; true when this call stored it (a replay check). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>
  /** Adds one and returns the new count; the TTL starts with the first increment (a fixed window). */
  increment(key: string, ttlMs: number): Promise<number>
  delete(key: string): Promise<void>
  ping(): Promise<boolean>
  close(): Promise<void>
}

/**
 * The shared store did not answer in time or is unreachable. Thrown by every kv call then, so an
 * operation that needs the store (a replay check, a denylist lookup) is refused with 503 rather
 * than done without it; rate limits catch it and count locally instead.
 */
export class KvUnavailable extends AppError {
  constructor(readonly reason: string) {
    super(503, 'unavailable', 'a shared store of the service does not answer; try again shortly', {
      'retry-after': '5',
    })
    this.name = 'KvUnavailable'
  }
}
