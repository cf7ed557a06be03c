/** The scopes this issuer grants today; offline_access and organization arrive with refresh tokens and organizations. */
export const SCOPES = ['openid', 'profile', 'email'] as const

export const parseScope = (scope: string | undefined) => [
  ...new Set((scope ?? '').split(' ').filter(Boolean)),
]

/** The claims each scope releases (OpenID Connect Core §5.4). */
export const CLAIMS_BY_SCOPE: Record<string, string[]> = {
  profile: ['name'],
  email: ['email', 'email_verified'],
}
