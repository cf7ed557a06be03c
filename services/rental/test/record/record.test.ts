import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { b64Decode, b64Encode, b64uDecode, b64uEncode } from '@svc/trust/base64url'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { verifyEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import { didKeyFromEd25519, ed25519FromDidKey } from '@svc/trust/did-key'
import { generateEd25519, signEd25519, verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash, verifyInclusion } from '@svc/trust/merkle'
import { openNote, verifierFromKey } from '@svc/trust/note'
import { marked } from 'marked'
import { type LedgerReceipt, receiptsAbout } from '@svc/testing/ledger'
import { type FullStack, startFullStack, WRITER } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface Receipt {
  id: string
  type: string
  subject: string
  task_id: string | null
  leaf_hash: string
  ledger_index: number | null
  envelope: { receipt: Record<string, unknown> & { issuer: string }; signature: string }
  proof: { tree_size: number; hashes: string[] } | null
  verified: boolean
  problem?: string
}
interface Slice {
  agent_did: string
  ledger: { url: string; reachable: boolean; error?: string }
  checkpoint: { note: string; size: number; root_hash: string; verified: boolean } | null
  log_key: { verifier_key: string; origin: string } | null
  receipts: Receipt[]
}
interface Task {
  id: string
  state: string
  error: string | null
  receipt: { id: string; leaf_hash: string; ledger_index: number | null } | null
}

const codeOf = (res: { body: Record<string, unknown> }) => (res.body.error as { code: string }).code
const randomDid = () => didKeyFromEd25519(generateEd25519().publicKey)

describe('the agents’ record: receipts with proofs, CV, evidence packs, revocation', () => {
  let s: FullStack
  let agentDid: string
  let otherAgentDid: string
  let engagementId: string
  let task: Task
  const key = generateEd25519()

  before(async () => {
    s = await startFullStack()
    agentDid = await s.agentOf('job_summary')
    otherAgentDid = await s.agentOf('job_invoice_check')
    engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const res = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree. Witnesses co-sign checkpoints.',
    })
    assert.equal(res.status, 200, res.text)
    task = res.body.task as Task
    assert.equal(task.state, 'completed', res.text)
    await eventually('the task’s receipt is on the ledger', async () => {
      const now = (await s.call(s.alice, 'GET', `/api/tasks/${task.id}`)).body as unknown as Task
      task = now
      return now.receipt?.ledger_index !== null && now.receipt?.ledger_index !== undefined
    })
  })
  after(async () => s.close())

  const receipts = async (who = s.alice, did = agentDid) => {
    const res = await s.call(who, 'GET', `/api/agents/${did}/receipts`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Slice
  }

  it('GET /api/agents/{did}/receipts: the task.completed receipt with an inclusion proof that verifies offline', async () => {
    const slice = await receipts()
    assert.equal(slice.ledger.reachable, true)
    assert.equal(slice.receipts.length, 1)
    const [receipt] = slice.receipts as [Receipt]
    assert.equal(receipt.type, 'task.completed')
    assert.equal(receipt.task_id, task.id)
    assert.equal(receipt.leaf_hash, task.receipt!.leaf_hash)
    assert.equal(receipt.ledger_index, task.receipt!.ledger_index)
    assert.equal(receipt.verified, true, receipt.problem)

    // offline, with the log key read from the ledger itself (not from the rental's answer)
    const logKey = (await (await fetch(`${s.ledger.url}/v1/key`)).json()) as { verifier_key: string }
    assert.equal(slice.log_key!.verifier_key, logKey.verifier_key)
    const opened = openNote(slice.checkpoint!.note, [verifierFromKey(logKey.verifier_key)])
    const checkpoint = parseCheckpoint(opened.text)
    assert.equal(checkpoint.size, slice.checkpoint!.size)
    assert.equal(receipt.proof!.tree_size, checkpoint.size)
    const leaf = leafHash(canonicalBytes(receipt.envelope))
    assert.equal(b64Encode(leaf), receipt.leaf_hash)
    assert.equal(
      verifyInclusion(
        leaf,
        receipt.ledger_index!,
        checkpoint.size,
        receipt.proof!.hashes.map(b64Decode),
        checkpoint.rootHash,
      ),
      true,
    )
    // the receipt is the provider's, signed, and about this task with this agent
    const envelope = receipt.envelope
    assert.ok(
      verifyEd25519(
        ed25519FromDidKey(envelope.receipt.issuer),
        canonicalBytes(envelope.receipt),
        b64uDecode(envelope.signature),
      ),
    )
    assert.equal((envelope.receipt.data as { agent_did: string }).agent_did, agentDid)
    // a proof against another root does not verify
    assert.equal(
      verifyInclusion(
        leaf,
        receipt.ledger_index!,
        checkpoint.size,
        receipt.proof!.hashes.map(b64Decode),
        checkpoint.rootHash.map((b, i) => (i === 0 ? b ^ 1 : b)),
      ),
      false,
    )
  })

  it('an unknown DID format is 400 on every route; an agent the client never used has no receipts', async () => {
    for (const [method, path, body] of [
      ['GET', '/api/agents/not-a-did/receipts', undefined],
      ['GET', '/api/agents/did:web:example.com/cv', undefined],
      ['GET', '/api/agents/did:key:zNope/evidence', undefined],
      ['POST', '/api/agents/did:key:z6Mk1/revoke', { reason: 'x' }],
    ] as const) {
      const res = await s.call(s.alice, method, path, body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_agent_did'], path)
    }
    assert.deepEqual((await receipts(s.alice, otherAgentDid)).receipts, [])
    assert.deepEqual((await receipts(s.alice, randomDid())).receipts, [])
    assert.equal((await s.call(s.alice, 'GET', `/api/agents/${randomDid()}/cv`)).status, 404)
    assert.equal((await fetch(`${s.rental.url}/api/agents/${agentDid}/receipts`)).status, 401)
  })

  it('every list pages with finite integers: limit or offset 1e309 is 400, never a 5XX', async () => {
    for (const query of ['limit=1e309', 'offset=1e309', 'limit=-1e309', 'limit=1.5', 'limit=101'])
      for (const path of [`/api/agents/${agentDid}/receipts`, '/api/tasks', '/api/engagements']) {
        const res = await s.call(s.alice, 'GET', `${path}?${query}`)
        assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], `${path}?${query}`)
      }
  })

  it('GET /api/agents/{did}/cv: an AgentCV signed by the provider (eddsa-jcs-2022) that verifies', async () => {
    const res = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/cv`)
    assert.equal(res.status, 200, res.text)
    const { cv, verification } = res.body as {
      cv: Record<string, unknown> & {
        issuer: string
        for_client: Record<string, unknown>
        overall: Record<string, unknown>
        jobs: Array<{ id: string }>
        proof: { verificationMethod: string; cryptosuite: string }
      }
      verification: { verified: boolean; method: string }
    }
    assert.equal(verification.verified, true)
    assert.deepEqual(verifyEddsaJcs2022Proof(cv), { verified: true })
    assert.equal(cv.type, 'AgentCV')
    assert.equal(cv.subject, agentDid)
    assert.equal(cv.proof.cryptosuite, 'eddsa-jcs-2022')
    assert.equal(verification.method, cv.proof.verificationMethod)
    assert.ok(verification.method.startsWith(`${cv.issuer}#`))
    assert.equal(cv.issuer, task.receipt && (await receipts()).receipts[0]!.envelope.receipt.issuer)
    assert.ok(typeof cv.name === 'string' && cv.name.length > 0)
    assert.ok(cv.jobs.some((j) => j.id === 'job_summary'))
    assert.equal(cv.for_client.client_did, didKeyFromEd25519(key.publicKey))
    assert.equal(cv.for_client.tasks_completed, 1)
    assert.equal(cv.for_client.tasks_failed, 0)
    assert.equal(cv.for_client.revoked, false)
    assert.equal(cv.for_client.receipts_on_ledger, 1)
    assert.ok(cv.for_client.first_activity && cv.for_client.last_activity)
    assert.equal(cv.overall.tasks_completed, 1)
    // any change breaks the proof
    assert.equal(
      verifyEddsaJcs2022Proof({
        ...cv,
        for_client: { ...cv.for_client, tasks_failed: 0, tasks_completed: 9 },
      }).verified,
      false,
    )
  })

  it('GET /api/agents/{did}/evidence: Markdown (GFM) and JSON with the same facts, per framework', async () => {
    const md = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence?framework=eu-ai-act&format=md`)
    assert.equal(md.status, 200)
    assert.match(md.headers.get('content-type')!, /^text\/markdown; charset=utf-8; variant=GFM/)
    assert.ok(md.text.includes(task.receipt!.leaf_hash), 'the receipt’s leaf hash')
    assert.ok(md.text.includes(task.id))
    const html = await marked.parse(md.text)
    assert.match(html, /<h1>Evidence pack: /)
    assert.match(html, /<th>Control<\/th>/)
    assert.match(html, /<td><code>Art\. 12<\/code><\/td>/)
    assert.ok(html.includes(`<code>${task.receipt!.leaf_hash}</code>`))

    const json = await s.call(
      s.alice,
      'GET',
      `/api/agents/${agentDid}/evidence?framework=eu-ai-act&format=json`,
    )
    assert.equal(json.status, 200)
    const pack = json.body as {
      framework: { id: string }
      engagements: Array<{ id: string; sla_signed: boolean }>
      tasks: Array<{ id: string; receipt_leaf_hash: string; ledger_index: number; input_sha256: string }>
      receipts: Array<{ leaf_hash: string; ledger_index: number; verified: boolean }>
      controls: Array<{ id: string }>
      revocations: unknown[]
    }
    assert.equal(pack.framework.id, 'eu-ai-act')
    assert.deepEqual(verifyEddsaJcs2022Proof(json.body), { verified: true }, 'the JSON pack is signed')
    assert.deepEqual(
      pack.engagements.map((e) => [e.id, e.sla_signed]),
      [[engagementId, true]],
    )
    assert.equal(pack.tasks[0]!.id, task.id)
    assert.equal(pack.tasks[0]!.receipt_leaf_hash, task.receipt!.leaf_hash)
    assert.equal(pack.tasks[0]!.ledger_index, task.receipt!.ledger_index)
    assert.equal(pack.receipts[0]!.leaf_hash, task.receipt!.leaf_hash)
    assert.equal(pack.receipts[0]!.verified, true)
    assert.deepEqual(pack.revocations, [])
    for (const fact of [pack.tasks[0]!.input_sha256, engagementId, ...pack.controls.map((c) => c.id)])
      assert.ok(md.text.includes(fact.replace(/\./g, '.')), fact)

    for (const framework of ['iso-42001', 'soc2', 'nist-ai-rmf']) {
      const res = await s.call(
        s.alice,
        'GET',
        `/api/agents/${agentDid}/evidence?framework=${framework}&format=json`,
      )
      assert.equal(res.status, 200, framework)
      assert.ok((res.body.controls as unknown[]).length >= 3)
    }
    const byDefault = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence`)
    assert.equal((byDefault.body.framework as { id: string }).id, 'eu-ai-act')
    const unknown = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence?framework=hipaa`)
    assert.deepEqual([unknown.status, codeOf(unknown)], [400, 'unknown_framework'])
    assert.match((unknown.body.error as { message: string }).message, /eu-ai-act, iso-42001, soc2/)
    assert.equal((await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence?format=pdf`)).status, 400)
  })

  it('evidence Markdown escapes what it quotes: a hostile agent name stays text', async () => {
    const before = await s.db
      .selectFrom('agents')
      .select('name')
      .where('did', '=', agentDid)
      .executeTakeFirstOrThrow()
    await s.db
      .updateTable('agents')
      .set({ name: '<img src=x onerror=alert(1)> | *bold* [link](http://x) `code`\n# heading' })
      .where('did', '=', agentDid)
      .execute()
    try {
      const md = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence?format=md`)
      const html = await marked.parse(md.text)
      assert.ok(!html.includes('<img'), html.slice(0, 300))
      assert.ok(!html.includes('<a '))
      assert.ok(!html.includes('<em>') && !html.includes('<strong>'))
      assert.equal((html.match(/<h1>/g) ?? []).length, 1)
      assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/)
    } finally {
      await s.db.updateTable('agents').set({ name: before.name }).where('did', '=', agentDid).execute()
    }
  })

  it('another client sees nothing of it: no receipts, an empty pack, a CV with none of its record', async () => {
    // bob's session has no DID of the client (so his CV names him by a pairwise hash)
    await s.db
      .updateTable('console_sessions')
      .set({ client_did: null })
      .where('subject', '=', 'another-client')
      .execute()
    assert.deepEqual((await receipts(s.bob)).receipts, [])
    const pack = (await s.call(s.bob, 'GET', `/api/agents/${agentDid}/evidence?format=json`)).body as {
      engagements: unknown[]
      tasks: unknown[]
      receipts: unknown[]
    }
    assert.deepEqual([pack.engagements, pack.tasks, pack.receipts], [[], [], []])
    const md = await s.call(s.bob, 'GET', `/api/agents/${agentDid}/evidence?format=md`)
    // (the checkpoint closing the pack may name a root equal to a leaf hash in a one-leaf tree)
    const facts = md.text.slice(0, md.text.indexOf('## Ledger checkpoint'))
    assert.ok(
      !facts.includes(task.receipt!.leaf_hash) && !facts.includes(task.id) && !facts.includes(engagementId),
    )
    assert.match(facts, /## Tasks\n\nNo entries\./)
    const cv = (await s.call(s.bob, 'GET', `/api/agents/${agentDid}/cv`)).body as {
      cv: { for_client: Record<string, unknown> }
    }
    assert.equal(cv.cv.for_client.tasks_completed, 0)
    assert.equal(cv.cv.for_client.engagements, 0)
    assert.equal(cv.cv.for_client.client_did, undefined)
    assert.match(cv.cv.for_client.client_pairwise as string, /^sha256:[0-9a-f]{64}$/)
    assert.ok(!JSON.stringify(cv).includes(task.id))
    assert.ok(!JSON.stringify(cv).includes(didKeyFromEd25519(key.publicKey)))
  })

  it('a released escrow’s escrow.released receipt joins the client’s slice, verified', async () => {
    const pending = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/releases/pending`)
    const [release] = pending.body.releases as Array<{
      escrow: { id: string; hash: string }
      instruction: unknown
    }>
    assert.ok(release, pending.text)
    const signature = b64uEncode(signEd25519(key.seed, canonicalBytes(release.instruction)))
    const paid = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/releases`, {
      escrow_hash: release.escrow.hash,
      instruction: { body: release.instruction, signature },
    })
    assert.equal(paid.status, 200, paid.text)
    await eventually('the release receipt is in the slice, verified', async () => {
      const slice = await receipts()
      return slice.receipts.some((r) => r.type === 'escrow.released' && r.verified)
    })
    const slice = await receipts()
    const released = slice.receipts.find((r) => r.type === 'escrow.released')!
    assert.equal(released.task_id, task.id)
    assert.equal((released as Receipt & { escrow_id: string }).escrow_id, release.escrow.id)
    assert.deepEqual(
      slice.receipts.map((r) => r.type),
      ['escrow.released', 'task.completed'],
    )
    assert.deepEqual((await receipts(s.bob)).receipts, [])
  })

  it('POST /api/agents/{did}/revoke: the kill switch, audited on the ledger, idempotent, CSRF-checked', async () => {
    const path = `/api/agents/${agentDid}/revoke`
    const noCsrf = await s.call(s.alice, 'POST', path, { reason: 'x' }, { csrf: false })
    assert.deepEqual([noCsrf.status, codeOf(noCsrf)], [403, 'csrf_failed'])
    for (const body of [{}, { reason: '' }, { reason: 'x'.repeat(501) }, { reason: 'x', extra: 1 }])
      assert.equal((await s.call(s.alice, 'POST', path, body)).status, 400, JSON.stringify(body))
    assert.equal(
      (await s.call(s.alice, 'POST', `/api/agents/${randomDid()}/revoke`, { reason: 'x' })).status,
      404,
    )

    // a task still running for this client with this agent (as a slow agent would leave one)
    await s.db
      .insertInto('tasks')
      .values({
        id: 'tsk_running_for_revoke',
        engagement_id: engagementId,
        org_id: s.alice.me.organization.id,
        agent_did: agentDid,
        state: 'working',
        async: true,
        price_fils: 0,
        input_text: 'still going',
        input_sha256: 'x',
        started_at: new Date(),
      })
      .execute()
    const reason = 'It summarised a <confidential> memo | wrongly'
    const first = await s.call(s.alice, 'POST', path, { reason })
    assert.equal(first.status, 200, first.text)
    const answer = first.body as {
      revoked_at: string
      reason_sha256: string
      tasks_stopped: string[]
      receipt: { id: string; type: string; leaf_hash: string }
    }
    assert.deepEqual(answer.tasks_stopped, ['tsk_running_for_revoke'])
    assert.equal(answer.reason_sha256, createHash('sha256').update(reason).digest('hex'))
    assert.equal(answer.receipt.type, 'agent.revoked')
    const stopped = await s.db
      .selectFrom('tasks')
      .select(['state', 'error'])
      .where('id', '=', 'tsk_running_for_revoke')
      .executeTakeFirstOrThrow()
    assert.deepEqual(stopped, { state: 'failed', error: 'agent revoked' })

    const refused = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'Hello.',
    })
    assert.deepEqual([refused.status, codeOf(refused)], [409, 'agent_revoked'])

    const again = await s.call(s.alice, 'POST', path, { reason: 'another reason' })
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    const second = again.body as typeof answer
    assert.equal(second.revoked_at, answer.revoked_at)
    assert.equal(second.reason_sha256, answer.reason_sha256)
    assert.equal(second.receipt.id, answer.receipt.id)
    assert.deepEqual(second.tasks_stopped, answer.tasks_stopped)

    const [onLedger] = await receiptsAbout({ url: s.ledger.url, writer: WRITER }, agentDid, (r) =>
      r.some((x) => x.receipt.type === 'agent.revoked'),
    )
    const revoked = onLedger as LedgerReceipt
    assert.equal(revoked.receipt.type, 'agent.revoked')
    assert.equal(revoked.leaf_hash, answer.receipt.leaf_hash)
    assert.equal(revoked.receipt.data.client_did, didKeyFromEd25519(key.publicKey))
    assert.equal(revoked.receipt.data.reason_digest, `sha256:${answer.reason_sha256}`)
    assert.equal(revoked.receipt.data.revoked_at, answer.revoked_at)
    assert.ok(!JSON.stringify(revoked).includes('confidential'), 'the reason itself stays off the ledger')

    await eventually('the revocation receipt is in the client’s slice, verified', async () => {
      const slice = await receipts()
      return slice.receipts.some((r) => r.type === 'agent.revoked' && r.verified)
    })
    const cv = (await s.call(s.alice, 'GET', `/api/agents/${agentDid}/cv`)).body as {
      cv: { for_client: Record<string, unknown> }
    }
    assert.equal(cv.cv.for_client.revoked, true)
    assert.equal(cv.cv.for_client.tasks_failed, 1)
    const md = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence?format=md&framework=soc2`)
    const html = await marked.parse(md.text)
    assert.ok(
      html.includes('&lt;confidential&gt; memo | wrongly') ||
        html.includes('&lt;confidential&gt; memo \\| wrongly'),
    )
    assert.ok(!html.includes('<confidential>'))
    // bob is untouched: his view of the agent is not revoked
    const bobs = (await s.call(s.bob, 'GET', `/api/agents/${agentDid}/cv`)).body as {
      cv: { for_client: Record<string, unknown> }
    }
    assert.equal(bobs.cv.for_client.revoked, false)
  })

  it('with the ledger down the receipts still answer 200: reachable false, no proof, never a 5XX', async () => {
    await s.stopLedger()
    const slice = await receipts()
    assert.equal(slice.ledger.reachable, false)
    assert.equal(slice.checkpoint, null)
    assert.ok(slice.receipts.length >= 1)
    for (const receipt of slice.receipts) {
      assert.equal(receipt.proof, null)
      assert.equal(receipt.verified, false)
    }
    assert.equal(
      slice.receipts.find((r) => r.type === 'task.completed')!.ledger_index,
      task.receipt!.ledger_index,
    )
    const md = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/evidence?format=md`)
    assert.equal(md.status, 200)
    assert.match(md.text, /unreachable/)
    const cv = await s.call(s.alice, 'GET', `/api/agents/${agentDid}/cv`)
    assert.equal(cv.status, 200)
  })
})
