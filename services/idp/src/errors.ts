import { errorCatalogue } from '@svc/kit'

/**
 * The error codes the idp answers, each with its status: RFC 6749 §5.2 and §4.1.2.1, RFC 6750 §3.1,
 * RFC 7591 §3.2.2, RFC 8628 §3.5, RFC 8707 §2, RFC 9449 §7.1 and §8, OpenID Connect Core §3.1.2.6,
 * OpenID4VCI §8.3.1 and its own. Routes raise them by name: `idpError('invalid_grant', '…')`.
 */
export const idpErrors = errorCatalogue({
  invalid_request: { status: 400, description: 'the request is missing a parameter or has a malformed one' },
  invalid_client: { status: 401, description: 'client authentication failed' },
  invalid_grant: {
    status: 400,
    description:
      'the grant (code, refresh token, device code, offer) is invalid, expired, used or not this client’s',
  },
  unauthorized_client: { status: 400, description: 'this client may not use this grant type' },
  unsupported_grant_type: { status: 400, description: 'the grant type is not supported' },
  unsupported_response_type: { status: 400, description: 'response_type other than code' },
  invalid_scope: { status: 400, description: 'the scope is unknown or exceeds what the client may ask' },
  invalid_target: { status: 400, description: 'the resource indicator is unknown or not allowed (RFC 8707)' },
  access_denied: { status: 403, description: 'the user, the organization or a policy refused the request' },
  login_required: { status: 401, description: 'the page or action needs a signed-in user' },
  consent_required: { status: 400, description: 'prompt=none, and the user has not consented' },
  request_not_supported: {
    status: 400,
    description: 'a request object (request) was sent: not supported, sent back to the redirect URI',
  },
  request_uri_not_supported: {
    status: 400,
    description: 'a request_uri not issued by /par: not supported, sent back to the redirect URI',
  },
  invalid_token: {
    status: 401,
    description: 'the access token or admin token is missing, invalid or expired',
  },
  insufficient_scope: { status: 403, description: 'the access token lacks a scope this resource needs' },
  invalid_client_metadata: { status: 400, description: 'a client registration field is invalid (RFC 7591)' },
  invalid_redirect_uri: { status: 400, description: 'a registered redirect URI is invalid (RFC 7591)' },
  invalid_dpop_proof: {
    status: 400,
    description: 'the DPoP proof is missing, malformed or does not match (RFC 9449)',
  },
  use_dpop_nonce: { status: 400, description: 'retry with the nonce in the DPoP-Nonce header (RFC 9449 §8)' },
  authorization_pending: {
    status: 400,
    description: 'the user has not yet approved the device or approval request',
  },
  slow_down: {
    status: 400,
    description: 'polling too fast (RFC 8628); a rate limit reached answers it too, with 429 and Retry-After',
  },
  expired_token: { status: 400, description: 'the device code or approval request expired' },
  invalid_credential_request: {
    status: 400,
    description: 'the credential request is malformed (OpenID4VCI)',
  },
  invalid_proof: {
    status: 400,
    description: 'the key proof of a credential request is invalid (OpenID4VCI)',
  },
  invalid_nonce: { status: 400, description: 'the c_nonce is unknown, expired or used (OpenID4VCI)' },
  invalid_encryption_parameters: {
    status: 400,
    description: 'credential response encryption is not supported',
  },
  credential_request_denied: {
    status: 400,
    description: 'the offer behind the token did not offer this credential',
  },
  invalid_sizes: { status: 400, description: 'a witness request names tree sizes that do not fit' },
  unknown_log: { status: 404, description: 'the witness does not witness this log' },
  bad_signature: { status: 403, description: 'the checkpoint is not signed by the log’s key' },
  inconsistent_proof: { status: 422, description: 'the consistency proof does not verify' },
  malformed_request: { status: 400, description: 'the witness request body is malformed' },
  no_hold: { status: 404, description: 'the account has no retention hold' },
  unknown_user: { status: 404, description: 'no such user' },
  not_found: { status: 404, description: 'no such resource' },
  conflict: { status: 409, description: 'the resource already exists or changed meanwhile' },
  temporarily_unavailable: { status: 503, description: 'a dependency is down; retry later' },
})

export const idpError = idpErrors.error
