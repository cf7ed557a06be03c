import { Type } from 'typebox'

export const Receipt = Type.Object(
  {
    type: Type.String({
      pattern: '^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$',
      maxLength: 100,
      description: 'e.g. task.completed',
    }),
    v: Type.Integer({ minimum: 1, maximum: 1000, description: 'version of this receipt type' }),
    issuer: Type.String({
      pattern: '^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]+$',
      maxLength: 100,
      description: 'the signer, an Ed25519 did:key',
    }),
    subject: Type.String({ minLength: 1, maxLength: 200 }),
    issued_at: Type.String({ format: 'date-time', maxLength: 40 }),
    data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
)

export const SignedReceipt = Type.Object(
  {
    receipt: Receipt,
    signature: Type.String({
      pattern: '^[A-Za-z0-9_-]{86}$',
      description: 'base64url Ed25519 signature of the JCS form of receipt',
    }),
  },
  { additionalProperties: false },
)

export const Appended = Type.Object({
  index: Type.Integer(),
  leaf_hash: Type.String({ description: 'base64 RFC 9162 leaf hash' }),
  tree_size: Type.Integer({ description: 'size of the first checkpoint that includes the receipt' }),
  duplicate: Type.Boolean(),
})

/** At most this many receipts in one batch append. */
export const MAX_BATCH = 100

export const SignedReceipts = Type.Object(
  {
    receipts: Type.Array(SignedReceipt, {
      minItems: 1,
      maxItems: MAX_BATCH,
      description: 'signed receipts, integrated together (one transaction, one checkpoint)',
    }),
  },
  { additionalProperties: false },
)

export const AppendedEach = Type.Object({
  results: Type.Array(
    Type.Union([
      Appended,
      Type.Object({
        error: Type.Object({ code: Type.String(), message: Type.String() }),
      }),
    ]),
    { description: 'one per receipt, in order: where it is in the log, or why it was refused' },
  ),
})
