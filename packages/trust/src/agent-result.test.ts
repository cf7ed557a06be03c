import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  type AgentResult,
  agentInputHash,
  agentOutputHash,
  checkAgentArtifact,
  signAgentResult,
  verifyAgentResult,
} from './agent-result.ts'
import { didKeyFromEd25519 } from './did-key.ts'
import { ed25519FromSeed } from './ed25519.ts'

const key = ed25519FromSeed(new Uint8Array(32).fill(7))
const did = didKeyFromEd25519(key.publicKey)
const data = { summary: 'Short.', numbers: [1, 2.5], nested: { b: 1, a: 'é' } }
const result: AgentResult = {
  type: 'svc.agent-result',
  version: 1,
  agent_did: did,
  task_id: 'task-1',
  context_id: 'ctx-1',
  input_sha256: agentInputHash(['Hello, ', 'world']),
  output_sha256: agentOutputHash(data),
  completed_at: '2025-03-12T10:00:00.000Z',
}

describe('agent results (svc.agent-result v1)', () => {
  it('hashes the input texts concatenated and the output in its JCS form', () => {
    // SHA-256("Hello, world")
    assert.equal(result.input_sha256, '4ae7c3b6ac0beff671efa8cf57386151c06e58ca53a78d83f36107316cec125f')
    assert.equal(agentOutputHash({ b: 1, a: 'é' }), agentOutputHash(JSON.parse('{"a":"é","b":1}')))
  })

  it('verifies a signature by the did:key named in the result', () => {
    const signature = signAgentResult(result, key.seed)
    assert.equal(verifyAgentResult(result, signature), true)
    // the same result with its keys in another order is the same JCS, so the same signature holds
    const reordered = Object.fromEntries(Object.entries(result).reverse())
    assert.equal(verifyAgentResult(reordered, signature), true)
  })

  it('refuses a tampered result, another signer, extra fields and malformed input without throwing', () => {
    const signature = signAgentResult(result, key.seed)
    assert.equal(verifyAgentResult({ ...result, output_sha256: '0'.repeat(64) }, signature), false)
    const other = didKeyFromEd25519(ed25519FromSeed(new Uint8Array(32).fill(8)).publicKey)
    assert.equal(verifyAgentResult({ ...result, agent_did: other }, signature), false)
    assert.equal(verifyAgentResult({ ...result, extra: 1 }, signature), false)
    assert.equal(verifyAgentResult({ ...result, version: 2 }, signature), false)
    assert.equal(verifyAgentResult({ ...result, agent_did: 'did:web:example.com' }, signature), false)
    assert.equal(verifyAgentResult(result, `${signature}=`), false)
    assert.equal(verifyAgentResult(result, signature.slice(0, -4)), false)
    assert.equal(verifyAgentResult(null, signature), false)
    assert.equal(verifyAgentResult(result, 42), false)
  })

  it('checks an artifact: signature, output hash, expected agent, task and input', () => {
    const artifact = {
      artifactId: 'a1',
      parts: [{ text: 'Short.' }, { data, mediaType: 'application/json' }],
      metadata: { svc_result: result, svc_signature: signAgentResult(result, key.seed) },
    }
    const good = checkAgentArtifact(artifact, {
      agentDid: did,
      taskId: 'task-1',
      inputTexts: ['Hello, ', 'world'],
    })
    assert.equal(good.ok, true)
    const tampered = structuredClone(artifact)
    tampered.parts[1]!.data!.summary = 'Long.'
    assert.deepEqual(checkAgentArtifact(tampered), {
      ok: false,
      reason: 'output_sha256 does not match the data part',
    })
    assert.equal(checkAgentArtifact(artifact, { agentDid: 'did:key:zOther' }).ok, false)
    assert.equal(checkAgentArtifact(artifact, { taskId: 'task-2' }).ok, false)
    assert.equal(checkAgentArtifact(artifact, { inputTexts: ['Hello, world!'] }).ok, false)
    assert.equal(checkAgentArtifact({ parts: [] }).ok, false)
    assert.equal(checkAgentArtifact(undefined).ok, false)
  })
})
