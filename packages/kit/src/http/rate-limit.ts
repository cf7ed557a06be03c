import type { FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'
import type { Kv } from '../kv/kv.ts'

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
 */
export function rateLimit(kv: Kv, name: string, options: RateLimit, code = 'rate_limited') {
  return async (request: FastifyRequest, reply: { header: (name: string, value: string) => unknown }) => {
    if (options.limit <= 0) return
    const window = Math.floor(Date.now() / options.windowMs)
    const subject = options.key?.(request) ?? request.ip
    const count = await kv.increment(`rl:${name}:${subject}:${window}`, options.windowMs)
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
