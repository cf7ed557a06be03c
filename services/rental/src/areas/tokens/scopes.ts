/**
 * What an `agt_` token may do on the A2A surface. A new token gets both; its policy may narrow
 * them, and a token with no scope can do nothing (least privilege, written down on the token).
 */
export const TOKEN_SCOPES = ['tasks:read', 'tasks:write'] as const
export type TokenScope = (typeof TOKEN_SCOPES)[number]
export const DEFAULT_SCOPES: readonly TokenScope[] = TOKEN_SCOPES
