import type { Kv } from './kv.ts'
import { MemoryKv } from './memory.ts'
import { RedisKv, type RedisKvOptions } from './redis.ts'

export { type Kv, KvUnavailable } from './kv.ts'
export { MemoryKv } from './memory.ts'
export { RedisKv, type RedisKvOptions } from './redis.ts'

/** Redis when a URL is given, the in-process store otherwise. Keys are prefixed per service. */
export function openKv(url: string | undefined, prefix: string, options: RedisKvOptions = {}): Kv {
  return url ? new RedisKv(url, prefix, options) : new MemoryKv()
}
