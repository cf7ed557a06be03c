import { Type } from 'typebox'

const Uri = Type.String({ minLength: 1, maxLength: 2000 })
const Uris = (max: number) => Type.Array(Uri, { maxItems: max })

export const NewClient = Type.Object(
  {
    client_name: Type.String({ minLength: 1, maxLength: 200 }),
    client_type: Type.Union([Type.Literal('confidential'), Type.Literal('public')]),
    first_party: Type.Optional(Type.Boolean({ default: false })),
    redirect_uris: Type.Array(Uri, { minItems: 1, maxItems: 20 }),
    post_logout_redirect_uris: Type.Optional(Uris(20)),
    allowed_origins: Type.Optional(Uris(20)),
    subject_type: Type.Optional(Type.Union([Type.Literal('public'), Type.Literal('pairwise')])),
    token_endpoint_auth_method: Type.Optional(
      Type.Union([
        Type.Literal('client_secret_basic'),
        Type.Literal('client_secret_post'),
        Type.Literal('private_key_jwt'),
        Type.Literal('none'),
      ]),
    ),
    jwks: Type.Optional(
      Type.Object(
        { keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 10 }) },
        { description: 'public keys for private_key_jwt (RFC 7591 §2)' },
      ),
    ),
    backchannel_logout_uri: Type.Optional(Uri),
    frontchannel_logout_uri: Type.Optional(Uri),
    client_uri: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2000,
        description:
          'RFC 7591 §2: the client’s home page (https; http in development), where the hosted pages link back to it',
      }),
    ),
    lifecycle_webhook_url: Type.Optional(Uri),
  },
  { additionalProperties: false },
)

/** The admin's registration may name the client (a first-party client known by name, as the rental's `svc-cli`). */
export const ManagedNewClient = Type.Object(
  {
    ...NewClient.properties,
    client_id: Type.Optional(
      Type.String({
        pattern: '^[a-z][a-z0-9-]{2,62}$',
        description: 'a chosen client_id (lowercase letters, digits and dashes); default: a random cli_…',
      }),
    ),
  },
  { additionalProperties: false },
)

export const Client = Type.Object({
  client_id: Type.String(),
  client_name: Type.String(),
  client_type: Type.String(),
  first_party: Type.Boolean(),
  subject_type: Type.String(),
  token_endpoint_auth_method: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  post_logout_redirect_uris: Type.Array(Type.String()),
  allowed_origins: Type.Array(Type.String()),
  backchannel_logout_uri: Type.Union([Type.String(), Type.Null()]),
  frontchannel_logout_uri: Type.Union([Type.String(), Type.Null()]),
  client_uri: Type.Union([Type.String(), Type.Null()]),
  lifecycle_webhook_url: Type.Union([Type.String(), Type.Null()]),
  did: Type.Union([Type.String(), Type.Null()]),
  agent_model: Type.Union([
    Type.Object({
      model: Type.String(),
      version: Type.Optional(Type.String()),
      provider: Type.Optional(Type.String()),
    }),
    Type.Null(),
  ]),
  workload: Type.Union([
    Type.Object({
      scheme: Type.String(),
      external_id: Type.String(),
      issuer: Type.String(),
      bound_at: Type.String(),
    }),
    Type.Null(),
  ]),
  jwks: Type.Optional(
    Type.Union([Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) }), Type.Null()]),
  ),
  require_pkce: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
})

export const CreatedClient = Type.Object({
  ...Client.properties,
  client_secret: Type.Optional(Type.String({ description: 'shown once; confidential clients only' })),
  client_secret_expires_at: Type.Optional(Type.Integer({ description: '0: never (RFC 7591)' })),
  webhook_secret: Type.String({ description: 'shown once' }),
})

export const ClientId = Type.Object({ client_id: Type.String({ minLength: 1, maxLength: 100 }) })
