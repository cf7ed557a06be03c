import type { App } from '@svc/kit'
import { type TSchema, Type } from 'typebox'
import { type ConsoleSessions, CSRF_SECURITY, SESSION_SECURITY, sessionOf } from '../auth/hooks.ts'
import { pendingReleases, release } from './releases.ts'
import { engagementDetail, engagementList, hire, type MoneyDeps, sign } from './service.ts'

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const Did = Type.String({ pattern: '^did:key:z[1-9A-HJ-NP-Za-km-z]{40,60}$' })
const Id = Type.String({ minLength: 1, maxLength: 100 })
const Hash = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' })
const Signature = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,200}$',
  description: 'base64url Ed25519 signature over the JCS bytes of the body',
})
const Body = Type.Record(Type.String(), Type.Unknown())
const Signed = Type.Object({ body: Body, hash: Type.String() })
export const Escrow = Type.Object({
  id: Type.String(),
  task_id: Nullable(Type.String()),
  state: Type.Union([Type.Literal('offered'), Type.Literal('open'), Type.Literal('released')]),
  amount_fils: Type.Integer(),
  currency: Type.String(),
  hash: Type.String({ description: 'sha256:<hex> of the JCS form of the body' }),
  body: Body,
  opened_at: Nullable(Type.String()),
  released_at: Nullable(Type.String()),
  fee_fils: Nullable(Type.Integer()),
  release_transfer_id: Nullable(Type.String()),
})
const EngagementSummary = Type.Object({
  id: Type.String(),
  state: Type.Union([Type.Literal('pending'), Type.Literal('active')]),
  job_id: Type.String(),
  agent_did: Type.String(),
  client_did: Type.String(),
  provider_did: Type.String(),
  price_fils: Type.Integer(),
  currency: Type.String(),
  created_at: Type.String(),
  activated_at: Nullable(Type.String()),
  sla: Type.Object({ body: Body, hash: Type.String(), signed: Type.Boolean() }),
})
const EngagementWithPackage = Type.Object({
  engagement: Type.Object({ ...EngagementSummary.properties, escrows: Type.Array(Escrow) }),
  package: Type.Object({ sla: Signed, escrows: Type.Array(Signed) }),
})
const Params = Type.Object({ id: Id })

export function engagementRoutes(app: App, deps: MoneyDeps, sessions: ConsoleSessions) {
  const tags = ['engagements']
  app.post(
    '/api/engagements',
    {
      ...sessions.sessionAndCsrf,
      schema: {
        summary: 'Hires an agent for a job: a pending engagement and the offer package to sign',
        tags,
        security: CSRF_SECURITY,
        body: Type.Object(
          { job_id: Id, agent_did: Did, client_did: Type.Optional(Did) },
          { additionalProperties: false },
        ),
        response: { 200: EngagementWithPackage },
      },
    },
    async (request) => hire(deps, sessionOf(request), request.body),
  )
  app.get(
    '/api/engagements',
    {
      ...sessions.session,
      schema: {
        summary: 'The signed-in client’s engagements, newest first',
        tags,
        security: SESSION_SECURITY,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
          offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
        }),
        response: { 200: Type.Object({ engagements: Type.Array(EngagementSummary) }) },
      },
    },
    async (request) =>
      engagementList(deps.db, sessionOf(request).subject, request.query.limit, request.query.offset),
  )
  app.get(
    '/api/engagements/:id',
    {
      ...sessions.session,
      schema: {
        summary: 'An engagement with its SLA, offer package and escrow states',
        tags,
        security: SESSION_SECURITY,
        params: Params,
        response: { 200: EngagementWithPackage },
      },
    },
    async (request) => engagementDetail(deps.db, sessionOf(request).subject, request.params.id),
  )
  app.post(
    '/api/engagements/:id/signatures',
    {
      ...sessions.sessionAndCsrf,
      schema: {
        summary:
          'The client’s signatures: the SLA (activates the engagement) and escrows (opens them on the rail); a forged one refuses the whole request',
        tags,
        security: CSRF_SECURITY,
        params: Params,
        body: Type.Object(
          {
            sla_signature: Type.Optional(Signature),
            escrow_signatures: Type.Optional(
              Type.Array(
                Type.Object(
                  {
                    escrow_hash: Type.Optional(Hash),
                    escrow_id: Type.Optional(Id),
                    signature: Signature,
                  },
                  { additionalProperties: false },
                ),
                { maxItems: 50 },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: EngagementWithPackage },
      },
    },
    async (request) => sign(deps, sessionOf(request).subject, request.params.id, request.body),
  )
  app.get(
    '/api/engagements/:id/releases/pending',
    {
      ...sessions.session,
      schema: {
        summary: 'Escrows still to sign, and release requests (completed tasks) with the body to sign',
        tags,
        security: SESSION_SECURITY,
        params: Params,
        response: {
          200: Type.Object({
            escrows_to_sign: Type.Array(Escrow),
            releases: Type.Array(
              Type.Object({
                escrow: Escrow,
                task: Type.Object({
                  id: Type.String(),
                  state: Type.String(),
                  completed_at: Nullable(Type.String()),
                  receipt: Type.Object({
                    id: Nullable(Type.String()),
                    leaf_hash: Nullable(Type.String()),
                    ledger_index: Nullable(Type.Integer()),
                  }),
                }),
                instruction: Body,
              }),
            ),
          }),
        },
      },
    },
    async (request) => pendingReleases(deps, sessionOf(request).subject, request.params.id),
  )
  app.post(
    '/api/engagements/:id/releases',
    {
      ...sessions.sessionAndCsrf,
      schema: {
        summary: 'Pays an open escrow out once, on the client’s signed release instruction',
        tags,
        security: CSRF_SECURITY,
        params: Params,
        headers: Type.Object({
          'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        }),
        body: Type.Object(
          {
            escrow_hash: Hash,
            instruction: Type.Object(
              {
                body: Type.Record(Type.String(), Type.Unknown(), { maxProperties: 20 }),
                signature: Signature,
              },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            escrow: Escrow,
            transfer: Type.Object({
              id: Type.String(),
              postings: Type.Array(Type.Object({ account: Type.String(), amount: Type.Integer() })),
            }),
            receipt: Type.Object({ id: Type.String(), leaf_hash: Type.String() }),
          }),
        },
      },
    },
    async (request) =>
      release(
        deps,
        sessionOf(request).subject,
        request.params.id,
        request.body,
        request.headers['idempotency-key'],
      ),
  )
}
