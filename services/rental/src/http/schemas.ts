import { DidKey } from '@svc/kit'
import { type TSchema, Type } from 'typebox'

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
export const Did = DidKey()
export const Id = Type.String({ minLength: 1, maxLength: 100 })
export const Hash = Type.String({ pattern: '^sha256:[0-9a-f]{64}$' })
export const Signature = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,200}$',
  description: 'base64url Ed25519 signature over the JCS bytes of the body',
})
export const Body = Type.Record(Type.String(), Type.Unknown())
export const Params = Type.Object({ id: Id })

/** An escrow as every route shows it (the tasks and releases routes too). */
export const Escrow = Type.Object({
  id: Type.String(),
  task_id: Nullable(Type.String()),
  state: Type.Union([
    Type.Literal('offered'),
    Type.Literal('open'),
    Type.Literal('released'),
    Type.Literal('returned'),
    Type.Literal('withdrawn'),
  ]),
  amount_fils: Type.Integer(),
  currency: Type.String(),
  hash: Type.String({ description: 'sha256:<hex> of the JCS form of the body' }),
  body: Body,
  opened_at: Nullable(Type.String()),
  released_at: Nullable(Type.String()),
  fee_fils: Nullable(Type.Integer()),
  vat_fils: Nullable(
    Type.Integer({ description: 'the VAT inside the amount (prices are VAT-inclusive), posted at release' }),
  ),
  release_transfer_id: Nullable(Type.String()),
})

/** The path parameter of the agent routes (record, revoke): checked as an Ed25519 did:key by the service. */
export const AgentParams = Type.Object({
  did: Type.String({ minLength: 1, maxLength: 200, description: 'the agent’s did:key (Ed25519)' }),
})
