/** The scopes this issuer grants. offline_access brings a refresh token; organization the `org` claim. */
export const SCOPES = ['openid', 'profile', 'email', 'offline_access', 'organization'] as const

export const parseScope = (scope: string | undefined) => [
  ...new Set((scope ?? '').split(' ').filter(Boolean)),
]

/** The claims each scope releases (OpenID Connect Core §5.4). */
export const CLAIMS_BY_SCOPE: Record<string, string[]> = {
  profile: ['name'],
  email: ['email', 'email_verified'],
  organization: ['org'],
}

/** RFC 6749 §3.3: scope-token = 1*NQCHAR. */
export const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/
