import type { Kv } from './kv.ts'
import { MemoryKv } from './memory.ts'
import { RedisKv } from './redis.ts'

export type { Kv } from './kv.ts'
export { MemoryKv } from './memory.ts'
export { RedisKv } from './redis.ts'

/** Redis when a URL is given, the in-process store otherwise. Keys are prefixed per service. */
export function openKv(url: string | undefined, prefix: string, onError?: (err: Error) => void): Kv {
  return url ? new RedisKv(url, prefix, onError) : new MemoryKv()
}
