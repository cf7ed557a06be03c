import { hkdfSync } from 'node:crypto'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { ed25519FromSeed } from '@svc/trust/ed25519'

export interface AgentKey {
  did: string
  publicKey: Uint8Array
  seed: Uint8Array
}

/**
 * An agent's Ed25519 key: the 32-byte seed is HKDF-SHA256 (RFC 5869) of the service seed, no salt,
 * info = the agent's id. The same AGENTS_KEY_SEED gives every agent the same did:key on every start.
 */
export function deriveAgentKey(serviceSeed: Uint8Array, agentId: string): AgentKey {
  const seed = new Uint8Array(hkdfSync('sha256', serviceSeed, new Uint8Array(0), agentId, 32))
  const { publicKey } = ed25519FromSeed(seed)
  return { did: didKeyFromEd25519(publicKey), publicKey, seed }
}
