import type { App, rateLimit } from '@svc/kit'
import { DEVICE_CODE } from '../token/index.ts'
import { PRE_AUTHORIZED_CODE } from '../token/index.ts'
import { ASSERTION_ALGS, SECRET_METHODS } from '../clients/index.ts'
import { DPOP_ALGS } from '../../oauth/dpop.ts'
import { SCOPES } from '../../oauth/scopes.ts'
import { TOKEN_EXCHANGE } from '../token/index.ts'

const CLIENT_AUTH_METHODS = [...SECRET_METHODS, 'private_key_jwt', 'none']

/** OpenID Connect Discovery 1.0 and RFC 8414 metadata: only what this issuer really supports today. */
export function metadata(issuer: string) {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    // RFC 7591, for organizations (their API key as the initial access token)
    registration_endpoint: `${issuer}/register`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    end_session_endpoint: `${issuer}/logout`,
    pushed_authorization_request_endpoint: `${issuer}/par`,
    device_authorization_endpoint: `${issuer}/device_authorization`,
    require_pushed_authorization_requests: false,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: true,
    frontchannel_logout_session_supported: true,
    revocation_endpoint: `${issuer}/revoke`,
    introspection_endpoint: `${issuer}/introspect`,
    // one authentication for every endpoint: a secret in the header or the body, an assertion, or none
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    scopes_supported: [...SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      TOKEN_EXCHANGE,
      DEVICE_CODE,
      PRE_AUTHORIZED_CODE,
    ],
    // OpenID4VCI §12.3: wallets redeem credential offers without client authentication
    'pre-authorized_grant_anonymous_access_supported': true,
    subject_types_supported: ['public', 'pairwise'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    dpop_signing_alg_values_supported: DPOP_ALGS,
    code_challenge_methods_supported: ['S256'],
    claims_supported: [
      'sub',
      'iss',
      'aud',
      'exp',
      'iat',
      'auth_time',
      'nonce',
      'acr',
      'amr',
      'sid',
      'at_hash',
      'name',
      'email',
      'email_verified',
      'did',
      'org',
    ],
    acr_values_supported: ['urn:svc:pwd', 'urn:svc:mfa'],
    prompt_values_supported: ['none', 'login', 'consent'],
    authorization_response_iss_parameter_supported: true,
    // OIDC Discovery §3: the languages of the hosted pages (ui_locales, Accept-Language, the switch)
    ui_locales_supported: ['en', 'ar'],
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  }
}

export function discoveryRoutes(app: App, issuer: string, limit: ReturnType<typeof rateLimit>) {
  const body = metadata(issuer)
  for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'])
    app.get(
      path,
      { onRequest: limit, schema: { summary: 'Issuer metadata', tags: ['discovery'] } },
      async (_request, reply) => reply.header('cache-control', 'public, max-age=300').send(body),
    )
}
