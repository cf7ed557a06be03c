/**
 * The floor's other process: an A2A-shaped agent (JSON-RPC `SendMessage` at POST /a2a, answering a
 * completed task whose artifact carries a result signed with Ed25519, as the built-in agents' do)
 * and a ledger stub (POST /v1/receipts checks the provider's signature and answers the next index).
 * No business: the agent's data part is the input's length, the ledger keeps a counter.
 * Env: FLOOR_PEERS_PORT. Prints nothing; `GET /readyz` answers once listening.
 */
import { randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { agentInputHash, agentOutputHash, signAgentResult } from '../../packages/trust/src/agent-result.ts'
import { b64uDecode } from '../../packages/trust/src/base64url.ts'
import { didKeyFromEd25519, ed25519FromDidKey } from '../../packages/trust/src/did-key.ts'
import { generateEd25519, verifyEd25519 } from '../../packages/trust/src/ed25519.ts'
import { canonicalBytes } from '../../packages/trust/src/jcs.ts'

const key = generateEd25519()
const agentDid = didKeyFromEd25519(key.publicKey)
const app = Fastify({ logger: false })

interface SendMessage {
  id: number | string
  params: { message: { messageId: string; parts: Array<{ text?: string }> } }
}

app.get('/readyz', async () => ({ ok: true, agent_did: agentDid }))

app.post<{ Body: SendMessage }>('/a2a', async (request) => {
  const { id, params } = request.body
  const texts = params.message.parts.flatMap((p) => (typeof p.text === 'string' ? [p.text] : []))
  const data = { characters: texts.join('').length }
  const taskId = randomUUID()
  const result = {
    type: 'svc.agent-result' as const,
    version: 1 as const,
    agent_did: agentDid,
    task_id: taskId,
    context_id: taskId,
    input_sha256: agentInputHash(texts),
    output_sha256: agentOutputHash(data),
    completed_at: new Date().toISOString(),
  }
  return {
    jsonrpc: '2.0',
    id,
    result: {
      task: {
        id: taskId,
        contextId: taskId,
        status: { state: 'TASK_STATE_COMPLETED' },
        artifacts: [
          {
            artifactId: randomUUID(),
            parts: [{ data }],
            metadata: { svc_result: result, svc_signature: signAgentResult(result, key.seed) },
          },
        ],
      },
    },
  }
})

let size = 0
app.post<{ Body: { body: Record<string, unknown>; provider_did: string; signature: string } }>(
  '/v1/receipts',
  async (request, reply) => {
    const { body, provider_did, signature } = request.body
    const ok = verifyEd25519(ed25519FromDidKey(provider_did), canonicalBytes(body), b64uDecode(signature))
    if (!ok) return reply.code(400).send({ error: { code: 'bad_signature', message: 'no' } })
    return { index: size++ }
  },
)

await app.listen({ port: Number(process.env.FLOOR_PEERS_PORT), host: '127.0.0.1' })
