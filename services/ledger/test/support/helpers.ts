import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type Ed25519KeyPair, generateEd25519, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'

export const WRITER = 'test-writer-token-000000001'
export const writerEnv = { LEDGER_WRITERS: `rental:${WRITER}`, LEDGER_BATCH_WAIT_MS: '2' }

export interface Issuer {
  keys: Ed25519KeyPair
  did: string
}

export function newIssuer(): Issuer {
  const keys = generateEd25519()
  return { keys, did: didKeyFromEd25519(keys.publicKey) }
}

export function signedReceipt(
  issuer: Issuer,
  subject: string,
  data: Record<string, unknown> = {},
  type = 'task.completed',
) {
  const receipt = { type, v: 1, issuer: issuer.did, subject, issued_at: new Date().toISOString(), data }
  return { receipt, signature: b64uEncode(signEd25519(issuer.keys.seed, canonicalBytes(receipt))) }
}

export function append(base: string, body: unknown, token = WRITER) {
  return fetch(`${base}/v1/receipts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  })
}
