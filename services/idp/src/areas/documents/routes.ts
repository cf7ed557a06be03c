import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { constitutionByHash } from './constitution.ts'
import {
  buildDocument,
  constitutionDocument,
  type DocumentDeps,
  issuerDocument,
  pqDocument,
  sovereigntyDocument,
} from './service.ts'

/** The idp's public operating documents (identity-provider.md, Public trust documents), each signed. */
export function documentRoutes(app: App, db: IdpDb, deps: DocumentDeps) {
  const schema = (summary: string) => ({ schema: { summary, tags: ['trust'] } })
  const publicDocument = (path: string, summary: string, make: () => Record<string, unknown>) =>
    app.get(path, schema(summary), async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(make()),
    )

  publicDocument('/.well-known/svc-issuer.json', 'The issuer’s ledger DID and its documents', () =>
    issuerDocument(deps),
  )
  publicDocument('/.well-known/svc-constitution.json', 'The operating rules in force, signed', () =>
    constitutionDocument(deps, deps.constitution.hash, deps.constitution.rules),
  )
  publicDocument(
    '/.well-known/svc-build.json',
    'The build attestation: commit, lockfile hash, build time',
    () => buildDocument(deps),
  )
  publicDocument('/.well-known/svc-sovereignty.json', 'Where and under which law the idp runs', () =>
    sovereigntyDocument(deps),
  )
  publicDocument('/.well-known/svc-pq.json', 'The issuer DID’s Ed25519 key bound to an ML-DSA-65 key', () =>
    pqDocument(deps),
  )
  app.get(
    '/.well-known/svc-constitution/:hash.json',
    {
      schema: {
        summary: 'A published version of the operating rules, by sha256:<hex> or its first 16 hex characters',
        tags: ['trust'],
        params: Type.Object({ hash: Type.String({ maxLength: 80 }) }),
      },
    },
    async (request, reply) => {
      const found = await constitutionByHash(db, request.params.hash)
      return reply
        .header('cache-control', 'public, max-age=86400, immutable')
        .send(constitutionDocument(deps, found.hash, found.document))
    },
  )
}
