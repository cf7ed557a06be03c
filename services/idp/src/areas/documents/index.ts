import { defineArea } from '../../context.ts'
import { publishConstitution } from './constitution.ts'
import { documentRoutes } from './routes.ts'
import type { DocumentDeps } from './service.ts'

export { type DocumentDeps, signed } from './service.ts'

/** The issuer's signed operating documents (constitution, sovereignty, build). */
export const documentsArea = defineArea({
  name: 'documents',
  needs: ['identity'],
  async mount(app, ctx, { identity }) {
    const documents: DocumentDeps = {
      issuer: ctx.issuer,
      identity: identity.ledger,
      pq: identity.pq,
      ledgerUrl: ctx.ledger.url,
      sovereignty: ctx.config.sovereignty,
      constitution: await publishConstitution(ctx.db),
      build: ctx.config.build,
    }
    documentRoutes(app, ctx.db, documents)
    return documents
  },
})
