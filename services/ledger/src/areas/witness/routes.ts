import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { LedgerDb } from '../../db.ts'
import { acceptCosignatures } from './service.ts'

export function witnessRoutes(app: App, db: LedgerDb, witnessKeys: () => string[]) {
  app.post(
    '/v1/cosignatures',
    {
      schema: {
        summary:
          "Submit a witness's cosignature of one of the log's checkpoints; the cosigned checkpoint is then served",
        tags: ['witness'],
        body: Type.Object(
          { note: Type.String({ minLength: 1, maxLength: 16_384 }) },
          { additionalProperties: false },
        ),
        response: { 200: Type.Object({ tree_size: Type.Integer(), witnesses: Type.Array(Type.String()) }) },
      },
    },
    async (request) => acceptCosignatures(db, witnessKeys(), request.body.note),
  )
}
