import { type App, notFound } from '@svc/kit'
import { Type } from 'typebox'
import type { LedgerDb } from '../../db.ts'
import { checkpointNote } from './store.ts'
import { bundle, consistency, entry, inclusion, tile } from './service.ts'

const Index = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })
const Size = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })
const B64 = Type.String({ description: 'base64' })

export function readRoutes(app: App, db: LedgerDb, logKey: string) {
  app.get(
    '/checkpoint',
    {
      schema: {
        summary: 'The latest checkpoint as a signed note (C2SP tlog-checkpoint), with witness cosignatures',
        tags: ['read'],
        produces: ['text/plain'],
      },
    },
    async (_request, reply) => {
      const latest = await checkpointNote(db)
      if (!latest) throw notFound('no checkpoint yet')
      return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(latest.note)
    },
  )

  app.get(
    '/v1/checkpoints/:size',
    {
      schema: {
        summary: 'The checkpoint of a given tree size, with its cosignatures',
        tags: ['read'],
        params: Type.Object({ size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) }),
      },
    },
    async (request, reply) => {
      const found = await checkpointNote(db, request.params.size)
      if (!found) throw notFound(`no checkpoint of size ${request.params.size}`, 'unknown_size')
      return reply.type('text/plain; charset=utf-8').send(found.note)
    },
  )

  app.get(
    '/tile/*',
    {
      schema: {
        summary:
          'C2SP tlog-tiles: hash tiles tile/<L>/<N>[.p/<W>] and entry bundles tile/entries/<N>[.p/<W>]',
        tags: ['read'],
        produces: ['application/octet-stream'],
      },
    },
    async (request, reply) => {
      const found = await tile(db, `tile/${(request.params as { '*': string })['*']}`)
      return reply
        .type('application/octet-stream')
        .header('cache-control', found.cacheControl)
        .send(found.body)
    },
  )

  app.get(
    '/v1/entries/:index',
    {
      schema: {
        summary: 'The receipt at an index',
        tags: ['read'],
        params: Type.Object({ index: Index }),
        response: {
          200: Type.Object({
            index: Type.Integer(),
            leaf_hash: B64,
            receipt: Type.Unknown(),
            signature: Type.String(),
            integrated_at: Type.String(),
          }),
        },
      },
    },
    async (request) => entry(db, request.params.index),
  )

  app.get(
    '/v1/proofs/inclusion',
    {
      schema: {
        summary:
          'RFC 9162 inclusion proof of an index in any tree size up to the latest (default: the latest)',
        tags: ['read'],
        querystring: Type.Object(
          { index: Index, tree_size: Type.Optional(Size) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            index: Type.Integer(),
            tree_size: Type.Integer(),
            leaf_hash: B64,
            proof: Type.Array(B64),
            checkpoint: Type.Optional(
              Type.String({
                description:
                  'the signed checkpoint of tree_size, when one was published for that size (sizes between two checkpoints have none: verify against a root you hold)',
              }),
            ),
          }),
        },
      },
    },
    async (request) => inclusion(db, request.query.index, request.query.tree_size),
  )

  app.get(
    '/v1/proofs/consistency',
    {
      schema: {
        summary: 'RFC 9162 consistency proof between two tree sizes (to defaults to the latest)',
        tags: ['read'],
        querystring: Type.Object({ from: Size, to: Type.Optional(Size) }, { additionalProperties: false }),
        response: { 200: Type.Object({ from: Type.Integer(), to: Type.Integer(), proof: Type.Array(B64) }) },
      },
    },
    async (request) => consistency(db, request.query.from, request.query.to),
  )

  app.get(
    '/v1/entries/:index/bundle',
    {
      schema: {
        summary:
          'The receipt with its inclusion proof, checkpoint and log key: verifiable offline with `npm run verify`. tree_size must be a checkpointed size (400 no_checkpoint_for_size names the nearest ones).',
        tags: ['read'],
        params: Type.Object({ index: Index }),
        querystring: Type.Object({ tree_size: Type.Optional(Size) }, { additionalProperties: false }),
      },
    },
    async (request) => bundle(db, request.params.index, logKey, request.query.tree_size),
  )
}
