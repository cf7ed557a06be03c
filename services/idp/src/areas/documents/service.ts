import { createEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import { didKeyVerificationMethod } from '@svc/trust/did-key'
import { ed25519FromSeed, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { type MlDsa65KeyPair, signMlDsa65 } from '@svc/trust/mldsa'
import { b64uEncode } from '@svc/trust/base64url'
import type { Sovereignty } from '../../config.ts'
import type { Identity } from '../identity/service.ts'
import { buildFacts } from './build.ts'

/** The ML-DSA signature's context (FIPS 204 §5.2), so it cannot be replayed as another statement. */
export const PQ_BINDING_CONTEXT = 'svc-pq-binding-v1'

export interface DocumentDeps {
  issuer: string
  identity: Identity
  pq: MlDsa65KeyPair
  ledgerUrl: string
  sovereignty: Sovereignty
  constitution: { hash: string; rules: Record<string, unknown> }
  build: { commit?: string; time?: string }
}

/**
 * Every operating document is signed the same way: a W3C Data Integrity proof (`eddsa-jcs-2022`)
 * by the issuer's did:key, which any verifier of that cryptosuite checks without us.
 */
export function signed(deps: Pick<DocumentDeps, 'identity'>, document: Record<string, unknown>) {
  return createEddsaJcs2022Proof(document, {
    seed: deps.identity.seed,
    verificationMethod: didKeyVerificationMethod(deps.identity.did),
    created: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  })
}

export const issuerDocument = (deps: DocumentDeps) =>
  signed(deps, {
    type: 'SvcIssuer',
    issuer: deps.issuer,
    did: deps.identity.did,
    verification_method: didKeyVerificationMethod(deps.identity.did),
    ledger: deps.ledgerUrl,
    documents: {
      constitution: `${deps.issuer}/.well-known/svc-constitution.json`,
      build: `${deps.issuer}/.well-known/svc-build.json`,
      sovereignty: `${deps.issuer}/.well-known/svc-sovereignty.json`,
      post_quantum: `${deps.issuer}/.well-known/svc-pq.json`,
      witness: `${deps.issuer}/.well-known/svc-witness.json`,
      cosignatures: `${deps.issuer}/.well-known/svc-cosignatures.json`,
    },
  })

export const constitutionDocument = (deps: DocumentDeps, hash: string, rules: Record<string, unknown>) =>
  signed(deps, { type: 'SvcConstitution', issuer: deps.issuer, hash, rules })

export const buildDocument = (deps: DocumentDeps) =>
  signed(deps, {
    type: 'SvcBuildAttestation',
    issuer: deps.issuer,
    service: 'idp',
    ...buildFacts(deps.build),
  })

export const sovereigntyDocument = (deps: DocumentDeps) =>
  signed(deps, { type: 'SvcSovereignty', issuer: deps.issuer, ...deps.sovereignty })

/**
 * The issuer's Ed25519 did:key bound to an ML-DSA-65 key: one statement naming both public keys,
 * signed by each (Ed25519 plainly; ML-DSA-65 with the context PQ_BINDING_CONTEXT), so each key
 * vouches for the other and a verifier holding either trusts both.
 */
export function pqDocument(deps: DocumentDeps) {
  const statement = {
    type: 'SvcPostQuantumBinding',
    issuer: deps.issuer,
    did: deps.identity.did,
    ed25519_public_key: b64uEncode(ed25519FromSeed(deps.identity.seed).publicKey),
    ml_dsa_65_public_key: b64uEncode(deps.pq.publicKey),
  }
  const bytes = canonicalBytes(statement)
  return {
    ...statement,
    ed25519_signature: b64uEncode(signEd25519(deps.identity.seed, bytes)),
    ml_dsa_65_signature: b64uEncode(
      signMlDsa65(deps.pq.secretKey, bytes, new TextEncoder().encode(PQ_BINDING_CONTEXT)),
    ),
    signed_bytes: 'the JCS (RFC 8785) form of the document without its two signatures',
  }
}
