import { sha256 } from '@noble/hashes/sha2.js'
import { base58 } from '@scure/base'
import { ed25519FromDidKey } from './did-key.ts'
import { ed25519FromSeed, signEd25519, verifyEd25519 } from './ed25519.ts'
import { canonicalBytes, canonicalize } from './jcs.ts'

/**
 * W3C Data Integrity proofs with the `eddsa-jcs-2022` cryptosuite (Data Integrity EdDSA Cryptosuites v1.0, §3.3):
 * hashData = SHA-256(JCS(proof configuration)) || SHA-256(JCS(document without proof)), signed with Ed25519,
 * proofValue = multibase base58btc ('z') of the signature.
 */
const TYPE = 'DataIntegrityProof'
const CRYPTOSUITE = 'eddsa-jcs-2022'
// XML Schema 1.1 dateTimeStamp: a dateTime with a mandatory time zone.
const DATE_TIME_STAMP = /^-?\d{4,}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

type Json = Record<string, unknown>

export interface EddsaJcs2022Options {
  seed: Uint8Array
  verificationMethod: string
  /** Default `assertionMethod`. */
  proofPurpose?: string
  /** XML Schema dateTimeStamp; left out of the proof when not given. */
  created?: string
}

export interface VerificationResult {
  verified: boolean
  error?: string
}

/** Returns a copy of `document` with an `eddsa-jcs-2022` proof. */
export function createEddsaJcs2022Proof(document: Json, options: EddsaJcs2022Options): Json {
  if ('proof' in document) throw new Error('the document already has a proof')
  const { seed, verificationMethod, proofPurpose = 'assertionMethod', created } = options
  if (created !== undefined && !isDateTimeStamp(created)) {
    throw new Error(`created is not a dateTimeStamp: ${created}`)
  }
  if (verificationMethod.startsWith('did:key:')) {
    const expected = ed25519FromDidKey(verificationMethod)
    if (!sameBytes(expected, ed25519FromSeed(seed).publicKey)) {
      throw new Error('the seed does not match the did:key verification method')
    }
  }
  const proof: Json = {
    type: TYPE,
    cryptosuite: CRYPTOSUITE,
    ...(created === undefined ? {} : { created }),
    verificationMethod,
    proofPurpose,
    ...('@context' in document ? { '@context': document['@context'] } : {}),
  }
  const signature = signEd25519(seed, eddsaJcs2022HashData(document, proof))
  return { ...document, proof: { ...proof, proofValue: `z${base58.encode(signature)}` } }
}

/**
 * Verifies the `eddsa-jcs-2022` proof of `secured`. `resolvePublicKey` maps a verification method to its
 * Ed25519 public key; the default resolves did:key verification methods. Never throws.
 */
export function verifyEddsaJcs2022Proof(
  secured: Json,
  resolvePublicKey: (verificationMethod: string) => Uint8Array | undefined = resolveDidKey,
): VerificationResult {
  try {
    return verify(secured, resolvePublicKey)
  } catch (error) {
    return { verified: false, error: error instanceof Error ? error.message : String(error) }
  }
}

/** The canonical proof configuration: the proof options without proofValue, with the document's @context. */
export function eddsaJcs2022ProofConfiguration(document: Json, proofOptions: Json): string {
  const proofConfig: Json = { ...proofOptions }
  delete proofConfig.proofValue
  if ('@context' in document) proofConfig['@context'] = document['@context']
  return canonicalize(proofConfig)
}

/** The bytes that are signed: SHA-256 of the canonical proof configuration, then of the canonical document. */
export function eddsaJcs2022HashData(document: Json, proofOptions: Json): Uint8Array {
  const out = new Uint8Array(64)
  out.set(sha256(new TextEncoder().encode(eddsaJcs2022ProofConfiguration(document, proofOptions))))
  out.set(sha256(canonicalBytes(document)), 32)
  return out
}

function verify(secured: Json, resolvePublicKey: (vm: string) => Uint8Array | undefined): VerificationResult {
  const fail = (error: string): VerificationResult => ({ verified: false, error })
  const { proof, ...document } = secured
  if (!isObject(proof)) return fail(Array.isArray(proof) ? 'proof sets are not supported' : 'no proof')
  const { proofValue, ...options } = proof
  if (options.type !== TYPE || options.cryptosuite !== CRYPTOSUITE) return fail(`not a ${CRYPTOSUITE} proof`)
  if (typeof options.verificationMethod !== 'string') return fail('proof has no verificationMethod')
  if (typeof options.proofPurpose !== 'string') return fail('proof has no proofPurpose')
  if (options.created !== undefined && !isDateTimeStamp(options.created))
    return fail('proof created is invalid')
  if (typeof proofValue !== 'string' || !proofValue.startsWith('z'))
    return fail('proofValue is not base58btc')
  let signature: Uint8Array
  try {
    signature = base58.decode(proofValue.slice(1))
  } catch {
    return fail('proofValue is not base58btc')
  }
  if (signature.length !== 64) return fail('proofValue is not an Ed25519 signature')

  // The proof's @context must be a prefix of the document's, and is what the document is checked under.
  if ('@context' in options) {
    const proofContext = asArray(options['@context'])
    const documentContext = asArray(document['@context'])
    const isPrefix = proofContext.every(
      (c, i) => i < documentContext.length && sameJson(c, documentContext[i]),
    )
    if (!isPrefix) return fail("the proof's @context does not match the document's")
    document['@context'] = options['@context']
  }

  let publicKey: Uint8Array | undefined
  try {
    publicKey = resolvePublicKey(options.verificationMethod)
  } catch {
    publicKey = undefined
  }
  if (publicKey === undefined) return fail(`cannot resolve verification method ${options.verificationMethod}`)
  const verified = verifyEd25519(publicKey, eddsaJcs2022HashData(document, options), signature)
  return verified ? { verified } : fail('signature does not verify')
}

function resolveDidKey(verificationMethod: string): Uint8Array | undefined {
  return verificationMethod.startsWith('did:key:') ? ed25519FromDidKey(verificationMethod) : undefined
}

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const isDateTimeStamp = (value: unknown): boolean =>
  typeof value === 'string' && DATE_TIME_STAMP.test(value) && !Number.isNaN(Date.parse(value))
const asArray = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : value === undefined ? [] : [value]
const sameJson = (a: unknown, b: unknown) => canonicalize(a) === canonicalize(b)
const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i])
