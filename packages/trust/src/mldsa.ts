import { ml_dsa65 } from '@noble/post-quantum/ml-dsa.js'

/** ML-DSA-65 (FIPS 204), pure mode with an optional context string, on @noble/post-quantum. */
export const ML_DSA_65 = {
  seed: 32,
  publicKey: 1952,
  secretKey: 4032,
  signature: 3309,
  maxContext: 255,
} as const

export interface MlDsa65KeyPair {
  publicKey: Uint8Array
  secretKey: Uint8Array
}

/** A key pair from a 32-byte seed (FIPS 204 ML-DSA.KeyGen_internal), or from fresh randomness. */
export function generateMlDsa65(seed?: Uint8Array): MlDsa65KeyPair {
  if (seed !== undefined && seed.length !== ML_DSA_65.seed) throw new Error('an ML-DSA-65 seed is 32 bytes')
  const { publicKey, secretKey } = ml_dsa65.keygen(seed)
  return { publicKey, secretKey }
}

/** Signs with the hedged (randomized) variant, so two signatures of one message differ. */
export function signMlDsa65(secretKey: Uint8Array, message: Uint8Array, context?: Uint8Array): Uint8Array {
  if (secretKey.length !== ML_DSA_65.secretKey) throw new Error('an ML-DSA-65 secret key is 4032 bytes')
  if (context !== undefined && context.length > ML_DSA_65.maxContext) {
    throw new Error('an ML-DSA context is at most 255 bytes')
  }
  return ml_dsa65.sign(message, secretKey, { context: context ?? new Uint8Array() })
}

/** Verifies an ML-DSA-65 signature; malformed keys, signatures or contexts answer false, never throw. */
export function verifyMlDsa65(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
  context?: Uint8Array,
): boolean {
  if (publicKey.length !== ML_DSA_65.publicKey || signature.length !== ML_DSA_65.signature) return false
  if (context !== undefined && context.length > ML_DSA_65.maxContext) return false
  try {
    return ml_dsa65.verify(signature, message, publicKey, { context: context ?? new Uint8Array() })
  } catch {
    return false
  }
}
