import { randomUUID } from 'node:crypto'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyVerificationMethod } from '@svc/trust/did-key'
import { ed25519FromSeed } from '@svc/trust/ed25519'
import { importJWK, SignJWT } from 'jose'
import { signed } from '../documents/index.ts'
import type { Identity } from '../identity/service.ts'
import { CREDENTIAL_TTL_S, CREDENTIAL_TYPE, VCDM_1_CONTEXT, VCDM_2_CONTEXT } from './metadata.ts'
import type { Holder } from './proof.ts'

/** What the credential says of the account: its DID, its address (and whether it was confirmed), its name. */
export interface AccountClaims {
  did: string
  email: string
  email_verified: boolean
  name?: string
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000)
const isoSeconds = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z')

/** The issuer's did:key as a JOSE private key (Ed25519, so EdDSA). */
async function issuerKey(identity: Identity) {
  const x = b64uEncode(ed25519FromSeed(identity.seed).publicKey)
  return importJWK({ kty: 'OKP', crv: 'Ed25519', x, d: b64uEncode(identity.seed) }, 'EdDSA')
}

/**
 * `jwt_vc_json` (OpenID4VCI Appendix A.1.1; VC Data Model 1.1 §6.3.1, JWT encoding): the VC in the
 * `vc` claim, `iss` the issuer's did:key (whose key id is in the header), `sub` the holder (a
 * did:key, or a JWK thumbprint URI with the key itself in `cnf.jwk`, RFC 7800), `jti`, `nbf`,
 * `exp`; signed EdDSA by the issuer's did:key.
 */
export async function jwtVc(identity: Identity, holder: Holder, claims: AccountClaims, now: Date) {
  const iat = seconds(now)
  return new SignJWT({
    sub: holder.id,
    jti: `urn:uuid:${randomUUID()}`,
    nbf: iat,
    exp: iat + CREDENTIAL_TTL_S,
    ...(holder.method === 'jwk' ? { cnf: { jwk: holder.jwk } } : {}),
    vc: {
      '@context': [VCDM_1_CONTEXT],
      type: ['VerifiableCredential', CREDENTIAL_TYPE],
      credentialSubject: { id: holder.id, ...claims },
    },
  })
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: didKeyVerificationMethod(identity.did) })
    .setIssuer(identity.did)
    .setIssuedAt(iat)
    .sign(await issuerKey(identity))
}

/**
 * `ldp_vc` (Appendix A.1.2): a VC Data Model 2.0 credential for a did:key holder, secured with an
 * `eddsa-jcs-2022` Data Integrity proof by the issuer's did:key, as the operating documents are.
 */
export function ldpVc(identity: Identity, holderDid: string, claims: AccountClaims, now: Date) {
  return signed(
    { identity },
    {
      '@context': [VCDM_2_CONTEXT],
      id: `urn:uuid:${randomUUID()}`,
      type: ['VerifiableCredential', CREDENTIAL_TYPE],
      issuer: identity.did,
      validFrom: isoSeconds(now),
      validUntil: isoSeconds(new Date(now.getTime() + CREDENTIAL_TTL_S * 1000)),
      credentialSubject: { id: holderDid, ...claims },
    },
  )
}
