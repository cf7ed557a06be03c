import { type App, badRequest } from '@svc/kit'
import { TLOG_SIZE_CONTENT_TYPE, formatTlogSize } from '@svc/trust/witness'
import { Type } from 'typebox'
import { type DocumentDeps, signed } from '../documents/index.ts'
import { addCheckpoint, rootOf, SizeConflict, type WitnessDeps } from './service.ts'
import { cosignaturesSince, splitViewEvidence, witnessedLogs } from './store.ts'
import { idpError } from '../../errors.ts'

const MAX_REQUEST_BYTES = 64 * 1024

/**
 * The idp as a witness of the ledger (identity-provider.md, Public trust documents): C2SP
 * tlog-witness add-checkpoint, and what it cosigned published as svc-witness.json and
 * svc-cosignatures.json.
 */
export async function witnessRoutes(app: App, deps: WitnessDeps, documents: DocumentDeps) {
  await app.register(async (scope) => {
    // the protocol names no content type: the body is read as text whatever it says
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MAX_REQUEST_BYTES }, (_r, body, done) =>
      done(null, body),
    )
    scope.post(
      '/witness/add-checkpoint',
      {
        schema: {
          summary:
            'C2SP tlog-witness: submit a checkpoint with a consistency proof from the last one cosigned; answers the cosignature lines',
          tags: ['trust'],
        },
      },
      async (request, reply) => {
        if (typeof request.body !== 'string')
          throw badRequest('send the add-checkpoint body', 'malformed_request')
        try {
          const lines = await addCheckpoint(deps, request.body)
          return reply.type('text/plain; charset=utf-8').send(lines)
        } catch (err) {
          if (err instanceof SizeConflict)
            return reply.code(409).type(TLOG_SIZE_CONTENT_TYPE).send(formatTlogSize(err.size))
          throw err
        }
      },
    )
  })

  app.get(
    '/.well-known/svc-witness.json',
    {
      schema: {
        summary: 'The latest ledger checkpoints this witness cosigned, and any split view it was shown',
        tags: ['trust'],
      },
    },
    async (_request, reply) => {
      const [logs, evidence] = await Promise.all([witnessedLogs(deps.db), splitViewEvidence(deps.db)])
      const document = signed(documents, {
        type: 'SvcWitness',
        issuer: documents.issuer,
        witness: {
          name: deps.witness.name,
          verifier_key: deps.witness.verifierKey,
          submission_prefix: deps.witness.prefix,
          protocol: 'https://c2sp.org/tlog-witness',
        },
        logs: logs.map((log) => ({
          origin: log.origin,
          verifier_key: log.verifier_key,
          tree_size: Number(log.tree_size),
          root_hash: rootOf(log.root_hash),
          checkpoint: log.checkpoint,
          cosigned_at: log.updated_at.toISOString(),
        })),
        split_view: {
          detected: evidence.length > 0,
          evidence: evidence.map((e) => ({
            origin: e.origin,
            kind: e.kind,
            observed_at: e.observed_at.toISOString(),
            cosigned_checkpoint: e.cosigned_checkpoint,
            presented_request: e.presented_request,
          })),
        },
      })
      return reply.header('cache-control', 'no-cache').send(document)
    },
  )

  app.get(
    '/.well-known/svc-cosignatures.json',
    {
      schema: {
        summary: 'Every cosignature this witness gave, oldest first, after `since` (a time or a tree size)',
        tags: ['trust'],
        querystring: Type.Object(
          {
            since: Type.Optional(Type.String({ maxLength: 40 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100 })),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const { since, limit = 100 } = request.query
      const rows = await cosignaturesSince(deps.db, parseSince(since), limit)
      const last = rows.at(-1)
      const next =
        rows.length === limit && last
          ? `${documents.issuer}/.well-known/svc-cosignatures.json?${new URLSearchParams({ since: last.cosigned_at.toISOString(), limit: String(limit) })}`
          : null
      return reply.header('cache-control', 'no-cache').send({
        witness: deps.witness.name,
        verifier_key: deps.witness.verifierKey,
        cosignatures: rows.map((row) => ({
          origin: row.origin,
          tree_size: Number(row.tree_size),
          root_hash: rootOf(row.root_hash),
          cosigned_at: row.cosigned_at.toISOString(),
          checkpoint: row.checkpoint,
        })),
        next,
      })
    },
  )
}

function parseSince(since: string | undefined): { time: Date } | { size: number } | undefined {
  if (since === undefined) return undefined
  if (/^(0|[1-9][0-9]{0,15})$/.test(since)) return { size: Number(since) }
  const time = new Date(since)
  if (!/^\d{4}-\d{2}-\d{2}T/.test(since) || Number.isNaN(time.getTime()))
    throw idpError('invalid_request', 'since is a tree size or an RFC 3339 time')
  return { time }
}
