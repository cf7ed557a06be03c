/**
 * The signed result of a built-in agent's task (`svc.agent-result`, version 1): what the agent read
 * and what it answered, by hash, signed by the agent's did:key. The rental service checks it with
 * `verifyAgentResult`; `checkAgentArtifact` also recomputes the output hash from an A2A artifact.
 */
import { createHash } from 'node:crypto'
import { b64uDecode, b64uEncode } from './base64url.ts'
import { ed25519FromDidKey } from './did-key.ts'
import { signEd25519, verifyEd25519 } from './ed25519.ts'
import { canonicalBytes, canonicalize } from './jcs.ts'

export const AGENT_RESULT_TYPE = 'svc.agent-result'
/** The artifact metadata keys holding the result and its signature. */
export const AGENT_RESULT_KEY = 'svc_result'
export const AGENT_SIGNATURE_KEY = 'svc_signature'

export interface AgentResult {
  type: typeof AGENT_RESULT_TYPE
  version: 1
  agent_did: string
  task_id: string
  context_id: string
  /** hex SHA-256 of the UTF-8 of the input message's text parts, concatenated without separator */
  input_sha256: string
  /** hex SHA-256 of the JCS form of the artifact's data part */
  output_sha256: string
  /** ISO 8601 UTC */
  completed_at: string
}

const sha256Hex = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex')

/** input_sha256: the text parts as sent, concatenated in order with nothing between them. */
export const agentInputHash = (texts: string[]): string => sha256Hex(Buffer.from(texts.join(''), 'utf8'))

/** output_sha256: the JCS (RFC 8785) form of the data part's value. */
export const agentOutputHash = (data: unknown): string => sha256Hex(canonicalize(data))

export function signAgentResult(result: AgentResult, seed: Uint8Array): string {
  return b64uEncode(signEd25519(seed, canonicalBytes(result)))
}

const HEX64 = /^[0-9a-f]{64}$/
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/
const KEYS = [
  'agent_did',
  'completed_at',
  'context_id',
  'input_sha256',
  'output_sha256',
  'task_id',
  'type',
  'version',
]

/** True when `value` has exactly the fields of an AgentResult, well formed. */
export function isAgentResult(value: unknown): value is AgentResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const r = value as Record<string, unknown>
  if (Object.keys(r).sort().join() !== KEYS.join()) return false
  return (
    r.type === AGENT_RESULT_TYPE &&
    r.version === 1 &&
    typeof r.agent_did === 'string' &&
    typeof r.task_id === 'string' &&
    r.task_id.length > 0 &&
    typeof r.context_id === 'string' &&
    typeof r.input_sha256 === 'string' &&
    HEX64.test(r.input_sha256) &&
    typeof r.output_sha256 === 'string' &&
    HEX64.test(r.output_sha256) &&
    typeof r.completed_at === 'string' &&
    ISO_UTC.test(r.completed_at)
  )
}

/**
 * Checks a result's signature by the key of its own `agent_did` (a did:key Ed25519). Anything
 * malformed (result, DID, signature) answers false; it never throws. The caller still checks that
 * `agent_did` is the agent it meant to hire, and the hashes against what it sent and received.
 */
export function verifyAgentResult(result: unknown, signature: unknown): boolean {
  if (!isAgentResult(result) || typeof signature !== 'string') return false
  try {
    const publicKey = ed25519FromDidKey(result.agent_did)
    return verifyEd25519(publicKey, canonicalBytes(result), b64uDecode(signature))
  } catch {
    return false
  }
}

export type ArtifactCheck = { ok: true; result: AgentResult; data: unknown } | { ok: false; reason: string }

/**
 * Checks an A2A artifact (1.0 or 0.3 JSON form: a part with `data`) carrying `svc_result` and
 * `svc_signature` in its metadata: the signature, the output hash against the data part, and,
 * when given, the agent's DID, the task id and the input texts.
 */
export function checkAgentArtifact(
  artifact: unknown,
  expect: { agentDid?: string; taskId?: string; inputTexts?: string[] } = {},
): ArtifactCheck {
  const a = artifact as { parts?: unknown; metadata?: Record<string, unknown> } | null
  const result = a?.metadata?.[AGENT_RESULT_KEY]
  const signature = a?.metadata?.[AGENT_SIGNATURE_KEY]
  if (!isAgentResult(result))
    return { ok: false, reason: 'no well-formed svc_result in the artifact metadata' }
  if (!verifyAgentResult(result, signature)) return { ok: false, reason: 'the signature does not verify' }
  const parts = Array.isArray(a?.parts) ? (a.parts as Array<Record<string, unknown>>) : []
  const dataParts = parts.filter((p) => p && typeof p === 'object' && 'data' in p)
  if (dataParts.length !== 1) return { ok: false, reason: 'the artifact must hold exactly one data part' }
  const data = dataParts[0]!.data
  let outputHash: string
  try {
    outputHash = agentOutputHash(data)
  } catch {
    return { ok: false, reason: 'the data part is not JSON' }
  }
  if (outputHash !== result.output_sha256)
    return { ok: false, reason: 'output_sha256 does not match the data part' }
  if (expect.agentDid !== undefined && expect.agentDid !== result.agent_did)
    return { ok: false, reason: 'signed by another agent' }
  if (expect.taskId !== undefined && expect.taskId !== result.task_id)
    return { ok: false, reason: 'the result is for another task' }
  if (expect.inputTexts !== undefined && agentInputHash(expect.inputTexts) !== result.input_sha256)
    return { ok: false, reason: 'input_sha256 does not match the input' }
  return { ok: true, result, data }
}
