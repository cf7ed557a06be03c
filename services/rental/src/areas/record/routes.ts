import { type App, LangQuery, moneyLocaleOf, pageOf, pageQuery } from '@svc/kit'
import { type TSchema, Type } from 'typebox'
import { DEFAULT_FRAMEWORK, evidencePack, FRAMEWORKS, renderEvidenceMarkdown } from './evidence.ts'
import { agentCv, type RecordDeps, receiptsSlice, signAsProvider } from './service.ts'
import { AgentParams, clientOf, orgOf, route } from '../../http/index.ts'

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const Body = Type.Record(Type.String(), Type.Unknown())
const Proof = Nullable(
  Type.Object({
    tree_size: Type.Integer(),
    hashes: Type.Array(Type.String({ description: 'base64' }), {
      description: 'RFC 9162 inclusion proof, leaf to root',
    }),
  }),
)
const Receipt = Type.Object({
  id: Type.String(),
  type: Type.String(),
  subject: Type.String(),
  task_id: Nullable(Type.String()),
  escrow_id: Nullable(Type.String()),
  issued_at: Type.String(),
  leaf_hash: Type.String({ description: 'base64 SHA-256(0x00 || JCS(envelope)) (RFC 9162 leaf hash)' }),
  ledger_index: Nullable(Type.Integer()),
  envelope: Type.Object({ receipt: Body, signature: Type.String() }),
  proof: Proof,
  verified: Type.Boolean({
    description: 'the proof leads to the root of the checkpoint signed by the log key',
  }),
  pending: Type.Boolean({
    description:
      'no proof yet for a passing reason (not delivered, not in the latest checkpoint, ledger unreachable): ask again later; false with a problem: a check failed',
  }),
  problem: Type.Optional(Type.String()),
})
const Ledger = Type.Object({
  url: Type.String(),
  reachable: Type.Boolean(),
  error: Type.Optional(Type.String()),
})
const Checkpoint = Nullable(
  Type.Object({
    note: Type.String({ description: 'the signed note (C2SP tlog-checkpoint), cosignatures included' }),
    origin: Type.String(),
    size: Type.Integer(),
    root_hash: Type.String(),
    verified: Type.Boolean(),
  }),
)
const LogKey = Nullable(
  Type.Object({ origin: Type.String(), verifier_key: Type.String(), did: Type.String() }),
)

export function recordRoutes(app: App, deps: RecordDeps) {
  const tags = ['record']
  app.get(
    '/api/agents/:did/receipts',
    {
      ...route.session('record:read'),
      schema: {
        summary:
          'The signed-in client’s slice of the agent’s receipts, each with an RFC 9162 inclusion proof against the ledger’s latest checkpoint',
        tags,
        params: AgentParams,
        // published with a page of 100 before the kit's one page schema: kept
        querystring: pageQuery({ limitDefault: 100 }),
        response: {
          200: Type.Object({
            agent_did: Type.String(),
            ledger: Ledger,
            checkpoint: Checkpoint,
            log_key: LogKey,
            receipts: Type.Array(Receipt),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => receiptsSlice(deps, orgOf(request), request.params.did, pageOf(request.query)),
  )
  app.get(
    '/api/agents/:did/cv',
    {
      ...route.session('record:read'),
      schema: {
        summary:
          'The AgentCV as the rental sees the agent, signed by the provider key (eddsa-jcs-2022), with its verification',
        tags,
        description:
          'The catalogue’s words (the agent’s name and description, its jobs’ titles and outcomes) in `lang`, else the member’s language, else Accept-Language’s (English where a text has no Arabic).',
        params: AgentParams,
        querystring: LangQuery({ additionalProperties: false }),
        response: {
          200: Type.Object({
            cv: Body,
            verification: Type.Object({
              verified: Type.Boolean(),
              method: Type.String(),
              cryptosuite: Type.String(),
              error: Type.Optional(Type.String()),
            }),
          }),
        },
      },
    },
    async (request) => agentCv(deps, clientOf(request), request.params.did, moneyLocaleOf(request)),
  )
  app.get(
    '/api/agents/:did/evidence',
    {
      ...route.session('record:read'),
      schema: {
        summary:
          'The evidence pack of what the agent did for the signed-in client, mapped to a framework’s controls (Markdown or JSON)',
        tags,
        params: AgentParams,
        querystring: Type.Object({
          framework: Type.String({
            minLength: 1,
            maxLength: 50,
            default: DEFAULT_FRAMEWORK,
            description: `one of ${Object.keys(FRAMEWORKS).join(', ')}`,
          }),
          format: Type.Union([Type.Literal('md'), Type.Literal('json')], { default: 'json' }),
        }),
        produces: ['application/json', 'text/markdown'],
      },
    },
    async (request, reply) => {
      const pack = await evidencePack(deps, clientOf(request), request.params.did, request.query.framework)
      reply.header('cache-control', 'no-store')
      // the JSON form is signed by the provider key (eddsa-jcs-2022), so an auditor can check it offline
      if (request.query.format === 'json') return signAsProvider(deps, pack).document
      return reply
        .type('text/markdown; charset=utf-8; variant=GFM')
        .header('content-disposition', `inline; filename="evidence-${pack.framework.id}.md"`)
        .send(renderEvidenceMarkdown(pack))
    },
  )
}
