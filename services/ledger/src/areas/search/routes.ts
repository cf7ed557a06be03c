import type { App } from '@svc/kit'
import { ledgerError } from '../../errors.ts'
import { b64Encode } from '@svc/trust/base64url'
import { Type } from 'typebox'
import { requireWriter, writerOf } from '../../auth.ts'
import type { LedgerConfig } from '../../config.ts'
import type { LedgerDb } from '../../db.ts'
import { searchLeaves } from '../read/index.ts'

/** Receipts by subject or issuer, for authorised readers (the writers), paged by index. */
export function searchRoutes(app: App, db: LedgerDb, config: LedgerConfig) {
  app.get(
    '/v1/receipts',
    {
      onRequest: requireWriter(config),
      schema: {
        summary: 'Search receipts by subject or issuer (writers only); page with after=<last index>',
        tags: ['read'],
        security: [{ writer: [] }],
        querystring: Type.Object(
          {
            subject: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
            after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
            limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => {
      writerOf(request, config)
      const { subject, issuer, after, limit } = request.query
      if (subject === undefined && issuer === undefined)
        throw ledgerError('invalid_query', 'give subject or issuer')
      const rows = await searchLeaves(db, {
        limit,
        ...(subject !== undefined ? { subject } : {}),
        ...(issuer !== undefined ? { issuer } : {}),
        ...(after !== undefined ? { after } : {}),
      })
      return {
        receipts: rows.map((r) => ({
          index: r.leaf_index,
          leaf_hash: b64Encode(r.leaf_hash),
          ...(JSON.parse(r.entry.toString('utf8')) as object),
          integrated_at: r.integrated_at.toISOString(),
        })),
        next_after: rows.length === limit ? rows.at(-1)!.leaf_index : null,
      }
    },
  )
}
