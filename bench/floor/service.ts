/**
 * The floor of a sync task: the hops and rows of the rental's task path without its business. A
 * Fastify route (POST /tasks) inserts the task row (durable before the agent is called), calls
 * the A2A-shaped agent of bench/floor/peers.ts over HTTP (fetch, as the rental's A2A client does),
 * verifies its Ed25519-signed result, then in ONE transaction writes the result and a receipt row
 * signed by the provider (Ed25519 over JCS), and answers; after the commit it appends the receipt
 * to the peers' ledger stub and keeps the ledger's index on the receipt row.
 * On the kit's database layer, as the services: PGlite in FLOOR_DATA_DIR, or PostgreSQL
 * (DATABASE_URL, schema DATABASE_SCHEMA). Env: FLOOR_PORT, FLOOR_PEERS_URL.
 */
import { createHash, randomUUID } from 'node:crypto'
import Fastify from 'fastify'
import { type Kysely, sql } from 'kysely'
import { inTransaction, openDatabase } from '../../packages/kit/src/db/index.ts'
import { checkAgentArtifact } from '../../packages/trust/src/agent-result.ts'
import { b64uEncode } from '../../packages/trust/src/base64url.ts'
import { didKeyFromEd25519 } from '../../packages/trust/src/did-key.ts'
import { generateEd25519, signEd25519 } from '../../packages/trust/src/ed25519.ts'
import { canonicalBytes } from '../../packages/trust/src/jcs.ts'

interface FloorTables {
  floor_tasks: {
    id: string
    input_text: string
    state: string
    output: string | null
    agent_signature: string | null
    created_at: Date
    completed_at: Date | null
  }
  floor_receipts: {
    id: string
    task_id: string
    body: string
    signature: string
    ledger_index: number | null
  }
}

const peers = process.env.FLOOR_PEERS_URL!
const database = await openDatabase<FloorTables>({
  url: process.env.DATABASE_URL,
  schema: process.env.DATABASE_SCHEMA ?? 'floor',
  dataDir: process.env.DATABASE_URL ? undefined : process.env.FLOOR_DATA_DIR,
})
const db: Kysely<FloorTables> = database.db
await sql`create table if not exists floor_tasks (
  id text primary key, input_text text not null, state text not null, output jsonb,
  agent_signature text, created_at timestamptz not null, completed_at timestamptz)`.execute(db)
await sql`create table if not exists floor_receipts (
  id text primary key, task_id text not null references floor_tasks(id), body jsonb not null,
  signature text not null, ledger_index bigint)`.execute(db)

const provider = generateEd25519()
const providerDid = didKeyFromEd25519(provider.publicKey)
const app = Fastify({ logger: false })

app.get('/readyz', async () => ({ ok: true }))

app.post<{ Body: { text: string } }>(
  '/tasks',
  { schema: { body: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } } } },
  async (request, reply) => {
    const id = randomUUID()
    const text = request.body.text
    await db
      .insertInto('floor_tasks')
      .values({ id, input_text: text, state: 'working', created_at: new Date() })
      .execute()
    const res = await fetch(`${peers}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'SendMessage',
        params: { message: { messageId: id, role: 'ROLE_USER', parts: [{ text }] } },
      }),
    })
    const answer = (await res.json()) as { result: { task: { artifacts: unknown[] } } }
    const artifact = answer.result.task.artifacts[0] as { metadata: { svc_signature: string } }
    const check = checkAgentArtifact(artifact, { inputTexts: [text] })
    if (!check.ok) return reply.code(502).send({ error: { code: 'bad_agent', message: check.reason } })
    const now = new Date()
    const body = {
      type: 'task.completed',
      task_id: id,
      agent_did: check.result.agent_did,
      input_sha256: check.result.input_sha256,
      output_sha256: check.result.output_sha256,
      agent_signature: artifact.metadata.svc_signature,
      completed_at: now.toISOString(),
    }
    const receipt = {
      id: randomUUID(),
      body,
      signature: b64uEncode(signEd25519(provider.seed, canonicalBytes(body))),
      leaf: createHash('sha256').update(canonicalBytes(body)).digest('base64'),
    }
    await inTransaction(db, async (trx) => {
      await trx
        .updateTable('floor_tasks')
        .set({
          state: 'completed',
          output: JSON.stringify(check.data),
          agent_signature: artifact.metadata.svc_signature,
          completed_at: now,
        })
        .where('id', '=', id)
        .execute()
      await trx
        .insertInto('floor_receipts')
        .values({ id: receipt.id, task_id: id, body: JSON.stringify(body), signature: receipt.signature })
        .execute()
    })
    void append(receipt)
    return {
      task: { id, state: 'completed', output: check.data, receipt: { id: receipt.id, leaf: receipt.leaf } },
    }
  },
)

/** After the commit: the receipt to the ledger stub, and its index kept on the row. */
async function append(receipt: { id: string; body: unknown; signature: string }) {
  try {
    const res = await fetch(`${peers}/v1/receipts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ body: receipt.body, provider_did: providerDid, signature: receipt.signature }),
    })
    const { index } = (await res.json()) as { index: number }
    await db.updateTable('floor_receipts').set({ ledger_index: index }).where('id', '=', receipt.id).execute()
  } catch (err) {
    console.error(`floor: append failed: ${(err as Error).message}`)
  }
}

await app.listen({ port: Number(process.env.FLOOR_PORT), host: '127.0.0.1' })
process.once('SIGTERM', () => {
  void app
    .close()
    .then(() => database.close())
    .then(() => process.exit(0))
})
