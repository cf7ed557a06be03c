/**
 * OpenID4VCI 1.0 §12.2: what this credential issuer issues. One credential type,
 * `SvcIdentityCredential`, in two formats: a JWT VC (`jwt_vc_json`, Appendix A.1.1) signed EdDSA by
 * the issuer's did:key, and a Data Integrity VC (`ldp_vc`, Appendix A.1.2) with an
 * `eddsa-jcs-2022` proof by the same key.
 */
export const CREDENTIAL_TYPE = 'SvcIdentityCredential'
export const JWT_VC_CONFIGURATION = 'SvcIdentityCredential'
export const LDP_VC_CONFIGURATION = 'SvcIdentityCredential_ldp_vc'
export const CONFIGURATION_IDS = [JWT_VC_CONFIGURATION, LDP_VC_CONFIGURATION]

/** Appendix F.1: the key proof's JOSE header `typ`. */
export const PROOF_TYP = 'openid4vci-proof+jwt'
/** The algorithms a key proof may use: Ed25519 (a did:key or a JWK) and P-256 (a JWK). */
export const PROOF_ALGS = ['EdDSA', 'ES256']
/** §8.2 and §12.2.4: how many key proofs, and so credentials, one request may carry. */
export const BATCH_SIZE = 3
/** How long an issued credential is valid (there is no status list yet: short rather than long). */
export const CREDENTIAL_TTL_S = 30 * 86_400

export const VCDM_1_CONTEXT = 'https://www.w3.org/2018/credentials/v1'
export const VCDM_2_CONTEXT = 'https://www.w3.org/ns/credentials/v2'

export type Format = 'jwt_vc_json' | 'ldp_vc'
export const formatOf = (configurationId: string): Format | undefined =>
  configurationId === JWT_VC_CONFIGURATION
    ? 'jwt_vc_json'
    : configurationId === LDP_VC_CONFIGURATION
      ? 'ldp_vc'
      : undefined

const display = [
  {
    name: 'svc identity',
    locale: 'en',
    description: 'Your svc account: its DID, email address and name',
    background_color: '#12107c',
    text_color: '#ffffff',
  },
]

const claims = [
  { path: ['credentialSubject', 'did'], display: [{ name: 'Account DID', locale: 'en' }] },
  { path: ['credentialSubject', 'email'], display: [{ name: 'Email', locale: 'en' }] },
  { path: ['credentialSubject', 'email_verified'], display: [{ name: 'Email verified', locale: 'en' }] },
  { path: ['credentialSubject', 'name'], display: [{ name: 'Name', locale: 'en' }] },
]

const proofTypes = { jwt: { proof_signing_alg_values_supported: PROOF_ALGS } }

/** The Credential Issuer Metadata (§12.2.4): the issuer is its own authorization server. */
export function issuerMetadata(issuer: string) {
  return {
    credential_issuer: issuer,
    credential_endpoint: `${issuer}/credential`,
    nonce_endpoint: `${issuer}/nonce`,
    batch_credential_issuance: { batch_size: BATCH_SIZE },
    display: [{ name: 'svc', locale: 'en' }],
    credential_configurations_supported: {
      [JWT_VC_CONFIGURATION]: {
        format: 'jwt_vc_json',
        cryptographic_binding_methods_supported: ['jwk', 'did:key'],
        credential_signing_alg_values_supported: ['EdDSA'],
        proof_types_supported: proofTypes,
        credential_definition: { type: ['VerifiableCredential', CREDENTIAL_TYPE] },
        credential_metadata: { display, claims },
      },
      [LDP_VC_CONFIGURATION]: {
        format: 'ldp_vc',
        cryptographic_binding_methods_supported: ['did:key'],
        credential_signing_alg_values_supported: ['eddsa-jcs-2022'],
        proof_types_supported: proofTypes,
        credential_definition: {
          '@context': [VCDM_2_CONTEXT],
          type: ['VerifiableCredential', CREDENTIAL_TYPE],
        },
        credential_metadata: { display, claims },
      },
    },
  }
}
