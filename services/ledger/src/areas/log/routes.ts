import { type App, AppError, inSpan } from '@svc/kit'
import { b64Encode } from '@svc/trust/base64url'
import { requireWriter, writerOf } from '../../auth.ts'
import type { LedgerConfig } from '../../config.ts'
import { leafOf } from './receipts.ts'
import { Appended, AppendedEach, SignedReceipt, SignedReceipts } from './schemas.ts'
import type { Sequenced, Sequencer } from './sequencer.ts'

export function logRoutes(app: App, config: LedgerConfig, sequencer: Sequencer) {
  app.post(
    '/v1/receipts',
    {
      onRequest: requireWriter(config),
      schema: {
        summary: 'Append a signed receipt (writers only); a duplicate answers its existing index',
        tags: ['log'],
        security: [{ writer: [] }],
        body: SignedReceipt,
        response: { 200: Appended, 201: Appended },
      },
    },
    async (request, reply) => {
      const writer = writerOf(request, config)
      const leaf = inSpan('receipt signature check', {}, () => leafOf(request.body, writer))
      const sequenced = await sequencer.submit(leaf)
      return reply.code(sequenced.duplicate ? 200 : 201).send(appended(sequenced))
    },
  )

  app.post(
    '/v1/receipts/batch',
    {
      onRequest: requireWriter(config),
      schema: {
        summary:
          'Append several signed receipts at once (writers only): integrated in one batch; each answered in order, or refused on its own',
        tags: ['log'],
        security: [{ writer: [] }],
        body: SignedReceipts,
        response: { 200: AppendedEach },
      },
    },
    async (request) => {
      const writer = writerOf(request, config)
      // each is checked on its own; those that pass are submitted together, so they share a batch
      const submitted = request.body.receipts.map((signed) => {
        try {
          const leaf = inSpan('receipt signature check', {}, () => leafOf(signed, writer))
          return sequencer.submit(leaf).then(appended)
        } catch (err) {
          if (!(err instanceof AppError)) throw err
          return { error: { code: err.code, message: err.message } }
        }
      })
      return { results: await Promise.all(submitted) }
    },
  )
}

const appended = (sequenced: Sequenced) => ({
  index: sequenced.index,
  leaf_hash: b64Encode(sequenced.leafHash),
  tree_size: sequenced.treeSize,
  duplicate: sequenced.duplicate,
})
