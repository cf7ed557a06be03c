import { type App, inSpan } from '@svc/kit'
import { b64Encode } from '@svc/trust/base64url'
import { requireWriter, writerOf } from '../../auth.ts'
import type { LedgerConfig } from '../../config.ts'
import { leafOf } from './receipts.ts'
import { Appended, SignedReceipt } from './schemas.ts'
import type { Sequencer } from './sequencer.ts'

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
      return reply.code(sequenced.duplicate ? 200 : 201).send({
        index: sequenced.index,
        leaf_hash: b64Encode(sequenced.leafHash),
        tree_size: sequenced.treeSize,
        duplicate: sequenced.duplicate,
      })
    },
  )
}
