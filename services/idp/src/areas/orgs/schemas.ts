import { Type } from 'typebox'

export const Organization = Type.Object({
  organization_id: Type.String(),
  name: Type.String(),
  contact_email: Type.String(),
  did: Type.String(),
  domain: Type.Union([Type.String(), Type.Null()]),
  domain_verified: Type.Boolean(),
  agent_deny_list: Type.Array(Type.String()),
  require_member_mfa: Type.Boolean(),
  max_clients: Type.Integer(),
  token_rate_limit_per_min: Type.Integer(),
  disabled: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
})

const Name = Type.String({ minLength: 1, maxLength: 200 })
const Email = Type.String({ format: 'email', maxLength: 320 })

export const SignUp = Type.Object(
  { name: Name, contact_email: Email, accept_terms: Type.Boolean() },
  { additionalProperties: false },
)

export const OrgChanges = Type.Object(
  {
    name: Type.Optional(Name),
    contact_email: Type.Optional(Email),
    // agent identifiers: DIDs or client_ids
    agent_deny_list: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 300 }), { maxItems: 1000 }),
    ),
    require_member_mfa: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const Quota = Type.Object(
  {
    max_clients: Type.Optional(Type.Integer({ minimum: 0, maximum: 100_000 })),
    token_rate_limit_per_min: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
  },
  { additionalProperties: false, minProperties: 1 },
)

export const OrgId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
