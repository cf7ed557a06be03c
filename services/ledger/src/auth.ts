import { createHash, timingSafeEqual } from 'node:crypto'
import { ledgerError } from './errors.ts'
import type { FastifyRequest } from 'fastify'
import type { LedgerConfig } from './config.ts'

/** The writer a bearer token belongs to; every known token is compared, in constant time. */
export function writerOf(request: FastifyRequest, config: LedgerConfig): string {
  const header = request.headers.authorization ?? ''
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(header)
  const given = createHash('sha256')
    .update(match?.[1] ?? '')
    .digest()
  let writer: string | undefined
  for (const w of config.writers) if (timingSafeEqual(given, w.tokenHash) && match) writer = w.name
  if (!writer)
    throw ledgerError('unauthorized', 'a writer bearer token is required', {
      'www-authenticate': 'Bearer realm="ledger"',
    })
  return writer
}

/** An onRequest hook: the writer token is checked before the body is parsed or validated (401 first). */
export const requireWriter = (config: LedgerConfig) => async (request: FastifyRequest) => {
  writerOf(request, config)
}
