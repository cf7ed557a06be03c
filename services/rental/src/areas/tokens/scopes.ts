/**
 * What an `agt_` token may do on the A2A surface. A new token gets both; its policy may narrow
 * them, and a token with no scope can do nothing (least privilege, written down on the token).
 */
export const TOKEN_SCOPES = ['tasks:read', 'tasks:write'] as const
export type TokenScope = (typeof TOKEN_SCOPES)[number]
export const DEFAULT_SCOPES: readonly TokenScope[] = TOKEN_SCOPES

/**
 * What an organization key (`ork_`, POST /v1/auth/keys) may be given: the /v1 permissions its
 * routes name, and the A2A scopes. Not `keys:write` (a key issues no key) nor `profile:write` (a
 * key is not a person). Each /v1 route checks its permission against the key's scopes.
 */
export const ORG_KEY_SCOPES = [
  'tasks:read',
  'tasks:write',
  'approvals:read',
  'connections:read',
  'secrets:read',
  'secrets:write',
  'audit:read',
  'org:read',
  'members:write',
  'roles:write',
] as const
export type OrgKeyScope = (typeof ORG_KEY_SCOPES)[number]
