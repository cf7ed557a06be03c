import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'
import { type Kv, KvUnavailable } from '../kv/kv.ts'
import { MemoryKv } from '../kv/memory.ts'

/** Where limits are counted while the shared store does not answer: this process alone. */
const localCounts = new MemoryKv()
let lastWarning = 0

/**
 * Counts on the shared store, or, when it does not answer, on this process's own (a limit then
 * holds per instance rather than across them: it fails open, but never unlimited), with a log line
 * at most every 10 s.
 */
export async function countIn(
  kv: Kv,
  key: string,
  windowMs: number,
  request: Pick<FastifyRequest, 'log'>,
): Promise<number> {
  try {
    return await kv.increment(key, windowMs)
  } catch (err) {
    if (!(err instanceof KvUnavailable)) throw err
    if (Date.now() - lastWarning > 10_000) {
      lastWarning = Date.now()
      request.log.warn(
        { err: err.reason },
        'rate limits counted in this process: the shared store does not answer',
      )
    }
    return localCounts.increment(key, windowMs)
  }
}

export interface RateLimit {
  /** Requests allowed per window; 0 turns the limit off (benchmarks). */
  limit: number
  windowMs: number
  /** What is counted: the caller's IP by default, or a client id. */
  key?: (request: FastifyRequest) => string
  /** Retry-After when over the limit: the rest of the window by default, or a fixed number of seconds. */
  retryAfterS?: number
}

/**
 * A fixed-window limit on the kv (shared by all instances through Redis when configured). Over
 * the limit: 429 with Retry-After; every answer carries RateLimit-Limit and RateLimit-Remaining.
 * A Redis outage does not refuse requests: the limit is counted in this process meanwhile.
 */
export function rateLimit(kv: Kv, name: string, options: RateLimit, code = 'rate_limited') {
  return async (request: FastifyRequest, reply: { header: (name: string, value: string) => unknown }) => {
    if (options.limit <= 0) return
    const window = Math.floor(Date.now() / options.windowMs)
    const subject = options.key?.(request) ?? request.ip
    const count = await countIn(kv, `rl:${name}:${subject}:${window}`, options.windowMs, request)
    reply.header('ratelimit-limit', String(options.limit))
    reply.header('ratelimit-remaining', String(Math.max(0, options.limit - count)))
    if (count > options.limit) {
      const retryAfter = Math.ceil(((window + 1) * options.windowMs - Date.now()) / 1000)
      throw new AppError(
        429,
        code,
        `too many requests: at most ${options.limit} per ${options.windowMs / 1000} s`,
        {
          'retry-after': String(options.retryAfterS ?? Math.max(1, retryAfter)),
        },
      )
    }
  }
}
