import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { verifyAgentResult } from '@svc/trust/agent-result'
import { b64uDecode, b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519, ed25519FromDidKey } from '@svc/trust/did-key'
import { generateEd25519, signEd25519, verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes, canonicalize } from '@svc/trust/jcs'
import { type LedgerReceipt, receiptsAbout } from '@svc/testing/ledger'
import { revokeAgent } from '../../src/areas/engagements/revocation-store.ts'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack, WRITER } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

type Body = Record<string, unknown>
interface Escrow {
  id: string
  task_id: string | null
  state: string
  amount_fils: number
  hash: string
  body: Body
}
interface Hired {
  engagement: { id: string; state: string; provider_did: string; escrows: Escrow[]; sla: { signed: boolean } }
  package: { sla: { body: Body; hash: string }; escrows: Array<{ body: Body; hash: string }> }
}
interface Task {
  id: string
  state: string
  async: boolean
  output: { text: string | null; data: unknown } | null
  output_expired: boolean
  message?: string
  receipt: { id: string; leaf_hash: string; ledger_index: number | null } | null
  runs: unknown
  escrow_id: string | null
  job_id: string | null
  job_title: string | null
  agent_name: string | null
}

const hashOf = (body: unknown) => `sha256:${createHash('sha256').update(canonicalize(body)).digest('hex')}`

describe('rental main path: hire, sign, task, receipt, release once', () => {
  // restartable: one test restarts the rental on the same database
  let s: FullStack
  let alice: Client
  let bob: Client
  const key = generateEd25519()
  const clientDid = didKeyFromEd25519(key.publicKey)
  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const rail = new JournalRail()
  const db = () => s.db
  const balance = (account: string) => rail.balance(db(), account)
  const call: FullStack['call'] = (...args) => s.call(...args)
  const codeOf = (res: { body: Record<string, unknown> }) => (res.body.error as { code: string }).code

  let summariserDid: string
  let hired: Hired
  let firstTask: Task

  before(async () => {
    s = await startFullStack({ RENTAL_OUTPUT_TTL_S: '4' }, { restartable: true })
    alice = s.alice
    bob = s.bob
    summariserDid = await s.agentOf('job_summary')
  })
  after(async () => s.close())

  it('POST /api/engagements hires: a pending engagement and the package (SLA and escrow bodies with their hashes)', async () => {
    const res = await call(alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: summariserDid,
      client_did: clientDid,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    hired = res.body as unknown as Hired
    assert.equal(hired.engagement.state, 'pending')
    const sla = hired.package.sla.body
    assert.equal(sla.type, 'svc.sla')
    assert.equal(sla.v, 1)
    assert.equal(sla.engagement_id, hired.engagement.id)
    assert.equal(sla.client_did, clientDid)
    assert.equal(sla.agent_did, summariserDid)
    assert.equal(sla.price_fils, 2500)
    assert.equal(sla.currency, 'AED')
    assert.match(sla.provider_did as string, /^did:key:z6Mk/)
    assert.equal(hired.package.sla.hash, hashOf(sla))
    assert.equal(hired.package.escrows.length, 1)
    const escrow = hired.package.escrows[0]!
    assert.deepEqual(
      { ...escrow.body, escrow_id: undefined, issued_at: undefined },
      {
        type: 'svc.escrow',
        v: 1,
        escrow_id: undefined,
        engagement_id: hired.engagement.id,
        task_id: null,
        amount_fils: 2500,
        currency: 'AED',
        payer_did: clientDid,
        payee_did: summariserDid,
        provider_did: sla.provider_did,
        issued_at: undefined,
      },
    )
    assert.match(escrow.body.escrow_id as string, /^esc_/)
    assert.equal(escrow.hash, hashOf(escrow.body))
    assert.match(hired.engagement.id, /^eng_/)
  })

  it('refuses an unknown job (404), an agent that does not serve the job (400) and no client DID (400)', async () => {
    const unknown = await call(alice, 'POST', '/api/engagements', {
      job_id: 'job_nope',
      agent_did: summariserDid,
    })
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'job_not_found'])
    const wrong = await call(alice, 'POST', '/api/engagements', {
      job_id: 'job_invoice_check',
      agent_did: summariserDid,
      client_did: clientDid,
    })
    assert.deepEqual([wrong.status, codeOf(wrong)], [400, 'agent_not_serving'])
    // a session without the client's DID needs client_did
    await db()
      .updateTable('console_sessions')
      .set({ client_did: null })
      .where('subject', '=', 'another-client')
      .execute()
    const none = await call(bob, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: summariserDid,
    })
    assert.deepEqual([none.status, codeOf(none)], [400, 'client_did_required'])
    const bad = await call(bob, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: summariserDid,
      client_did: `did:key:z${'1'.repeat(45)}`,
    })
    assert.deepEqual([bad.status, codeOf(bad)], [400, 'invalid_client_did'])
  })

  it('a forged SLA signature is 400 bad_signature and the engagement stays pending', async () => {
    const forger = generateEd25519()
    const forged = b64uEncode(signEd25519(forger.seed, canonicalBytes(hired.package.sla.body)))
    const res = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: forged,
    })
    assert.deepEqual([res.status, codeOf(res)], [400, 'bad_signature'])
    const now = await call(alice, 'GET', `/api/engagements/${hired.engagement.id}`)
    assert.equal((now.body.engagement as { state: string }).state, 'pending')
  })

  it('a replayed signature of another body is 400, and a forged escrow signature refuses the whole request', async () => {
    const escrow = hired.package.escrows[0]!
    const replayed = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: sign(escrow.body),
    })
    assert.deepEqual([replayed.status, codeOf(replayed)], [400, 'bad_signature'])
    const forged = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: sign(hired.package.sla.body),
      escrow_signatures: [{ escrow_hash: escrow.hash, signature: sign({ ...escrow.body, amount_fils: 1 }) }],
    })
    assert.deepEqual([forged.status, codeOf(forged)], [400, 'bad_signature'])
    const now = (await call(alice, 'GET', `/api/engagements/${hired.engagement.id}`)).body as unknown as Hired
    assert.equal(now.engagement.state, 'pending')
    assert.equal(now.engagement.escrows[0]!.state, 'offered')
  })

  it('POST /api/tasks on a pending engagement is 409 engagement_not_active', async () => {
    const res = await call(alice, 'POST', '/api/tasks', {
      engagement_id: hired.engagement.id,
      text: 'Hello.',
    })
    assert.deepEqual([res.status, codeOf(res)], [409, 'engagement_not_active'])
  })

  it('valid SLA and escrow signatures activate the engagement and open the escrow on the rail', async () => {
    const escrow = hired.package.escrows[0]!
    const res = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: sign(hired.package.sla.body),
      escrow_signatures: [{ escrow_hash: escrow.hash, signature: sign(escrow.body) }],
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const now = res.body as unknown as Hired
    assert.equal(now.engagement.state, 'active')
    assert.equal(now.engagement.sla.signed, true)
    assert.equal(now.engagement.escrows[0]!.state, 'open')
    const org = alice.me.organization.id
    assert.equal(await balance(`wallet:${org}`), 1_000_000 - 2500)
    assert.equal(await balance(`escrow:${escrow.body.escrow_id as string}`), 2500)
    const list = await call(alice, 'GET', '/api/engagements')
    assert.equal((list.body.engagements as Array<{ id: string }>)[0]!.id, hired.engagement.id)
  })

  it('POST /api/tasks (sync) runs the summariser over A2A: output, and a receipt signed by the provider carrying the agent’s signature', async () => {
    const text =
      'The ledger records every receipt the platform issues. Each receipt is a leaf in a Merkle tree. Witnesses co-sign the checkpoints, so a log that forks is caught. The weather in Dubai was hot.'
    const res = await call(alice, 'POST', '/api/tasks', { engagement_id: hired.engagement.id, text })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    firstTask = res.body.task as Task
    assert.equal(firstTask.state, 'completed', JSON.stringify(firstTask))
    assert.ok(firstTask.output)
    assert.ok((firstTask.output.data as { summary: string }).summary.includes('ledger'))
    assert.ok(firstTask.receipt?.id.startsWith('rcp_'))
    // the answer's names, from the engagement its creation read: the words of the task's page
    const names = (t: Task) => [t.job_id, t.job_title, t.agent_name]
    const page = (await call(alice, 'GET', `/api/tasks/${firstTask.id}`)).body as unknown as Task
    assert.deepEqual(names(firstTask), ['job_summary', 'Document summary', 'Summariser'])
    assert.deepEqual(names(firstTask), names(page))
    // the agent's task id, kept by the completion when the answer came with it
    const kept = await db()
      .selectFrom('tasks')
      .select('agent_task_id')
      .where('id', '=', firstTask.id)
      .executeTakeFirstOrThrow()
    assert.match(kept.agent_task_id ?? '', /.+/)
    // the first task takes the package's escrow
    const escrow = res.body.escrow as Escrow
    assert.equal(escrow.id, hired.package.escrows[0]!.body.escrow_id)
    assert.equal(escrow.task_id, firstTask.id)

    const [found] = await receiptsAbout(
      { url: s.ledger.url, writer: WRITER },
      firstTask.id,
      (r) => r.length > 0,
    )
    const receipt = found as LedgerReceipt
    assert.equal(receipt.receipt.type, 'task.completed')
    assert.equal(receipt.receipt.issuer, hired.engagement.provider_did)
    assert.equal(receipt.leaf_hash, firstTask.receipt!.leaf_hash)
    assert.ok(
      verifyEd25519(
        ed25519FromDidKey(receipt.receipt.issuer),
        canonicalBytes(receipt.receipt),
        b64uDecode(receipt.signature),
      ),
    )
    const data = receipt.receipt.data
    assert.equal(data.agent_did, summariserDid)
    assert.equal(data.client_did, clientDid)
    assert.equal(data.price_fils, 2500)
    assert.equal(data.input_sha256, createHash('sha256').update(text).digest('hex'))
    assert.equal(verifyAgentResult(data.agent_result, data.agent_signature), true)
    assert.equal((data.agent_result as { agent_did: string }).agent_did, summariserDid)
    await eventually('the task knows its ledger index', async () => {
      const task = (await call(alice, 'GET', `/api/tasks/${firstTask.id}`)).body as unknown as Task
      return task.receipt?.ledger_index === receipt.index
    })
  })

  let pending: { escrow: Escrow; instruction: Body; task: { receipt: { leaf_hash: string } } }

  it('GET releases/pending lists the completed task’s escrow with the release body to sign', async () => {
    const res = await call(alice, 'GET', `/api/engagements/${hired.engagement.id}/releases/pending`)
    assert.equal(res.status, 200)
    const releases = res.body.releases as Array<typeof pending>
    assert.equal(releases.length, 1)
    pending = releases[0]!
    assert.equal(pending.task.receipt.leaf_hash, firstTask.receipt!.leaf_hash)
    assert.equal(pending.instruction.type, 'svc.release')
    assert.equal(pending.instruction.escrow_hash, hired.package.escrows[0]!.hash)
    assert.equal(pending.instruction.amount_fils, 2500)
    assert.equal(pending.instruction.fee_fils, 250)
    // the price is VAT-inclusive: 2500 × 5/105 = 119.05 → 119 of it is VAT
    assert.equal(pending.instruction.vat_fils, 119)
    assert.equal(pending.instruction.payee_did, summariserDid)
  })

  it('refuses a release instruction signed by another key (400 bad_signature)', async () => {
    const forger = generateEd25519()
    const res = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/releases`, {
      escrow_hash: pending.escrow.hash,
      instruction: {
        body: pending.instruction,
        signature: b64uEncode(signEd25519(forger.seed, canonicalBytes(pending.instruction))),
      },
    })
    assert.deepEqual([res.status, codeOf(res)], [400, 'bad_signature'])
  })

  let firstRelease: { transfer: { id: string } }

  it('20 concurrent identical releases pay once: payout amount − fee − VAT, the fee and the VAT once, the escrow empty', async () => {
    const body = {
      escrow_hash: pending.escrow.hash,
      instruction: { body: pending.instruction, signature: sign(pending.instruction) },
    }
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        call(alice, 'POST', `/api/engagements/${hired.engagement.id}/releases`, body),
      ),
    )
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body))
    assert.equal(new Set(answers.map((a) => (a.body.transfer as { id: string }).id)).size, 1)
    firstRelease = answers[0]!.body as typeof firstRelease
    assert.equal(await balance(`payout:${summariserDid}`), 2131)
    assert.equal(await balance('platform:fees'), 250)
    assert.equal(await balance('platform:vat'), 119)
    assert.equal(await balance(`escrow:${pending.escrow.id}`), 0)
    const again = await call(alice, 'GET', `/api/engagements/${hired.engagement.id}/releases/pending`)
    assert.equal((again.body.releases as unknown[]).length, 0)
  })

  it('a release retried after the rental restarts on the same database pays once (Idempotency-Key too)', async () => {
    await s.restartRental()
    const body = {
      escrow_hash: pending.escrow.hash,
      instruction: {
        body: { ...pending.instruction, issued_at: new Date().toISOString() },
        signature: '',
      },
    }
    body.instruction.signature = sign(body.instruction.body)
    const headers = { 'idempotency-key': 'release-retry-1' }
    const retry = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/releases`, body, {
      headers,
    })
    assert.equal(retry.status, 200, JSON.stringify(retry.body))
    assert.equal((retry.body.transfer as { id: string }).id, firstRelease.transfer.id)
    const replay = await call(alice, 'POST', `/api/engagements/${hired.engagement.id}/releases`, body, {
      headers,
    })
    assert.deepEqual(replay.body, retry.body)
    const reused = await call(
      alice,
      'POST',
      `/api/engagements/${hired.engagement.id}/releases`,
      { ...body, escrow_hash: hired.package.sla.hash },
      { headers },
    )
    assert.deepEqual([reused.status, codeOf(reused)], [409, 'idempotency_key_reused'])
    assert.equal(await balance(`payout:${summariserDid}`), 2131)
    assert.equal(await balance('platform:fees'), 250)
    assert.equal(await balance('platform:vat'), 119)
  })

  it('another client’s engagement and task are 404', async () => {
    for (const path of [
      `/api/engagements/${hired.engagement.id}`,
      `/api/engagements/${hired.engagement.id}/releases/pending`,
      `/api/tasks/${firstTask.id}`,
    ]) {
      const res = await call(bob, 'GET', path)
      assert.equal(res.status, 404, path)
    }
    const sig = await call(bob, 'POST', `/api/engagements/${hired.engagement.id}/signatures`, {
      sla_signature: sign(hired.package.sla.body),
    })
    assert.equal(sig.status, 404)
    const task = await call(bob, 'POST', '/api/tasks', { engagement_id: hired.engagement.id, text: 'x' })
    assert.equal(task.status, 404)
    assert.deepEqual((await call(bob, 'GET', '/api/tasks')).body.tasks, [])
    assert.deepEqual((await call(bob, 'GET', '/api/engagements')).body.engagements, [])
  })

  it('every S+C route answers 403 csrf_failed without the CSRF header', async () => {
    const id = hired.engagement.id
    for (const [path, body] of [
      ['/api/engagements', { job_id: 'job_summary', agent_did: summariserDid }],
      [`/api/engagements/${id}/signatures`, { sla_signature: 'x' }],
      [`/api/engagements/${id}/releases`, { escrow_hash: 'x', instruction: {} }],
      ['/api/tasks', { engagement_id: id, text: 'x' }],
    ] as const) {
      const res = await call(alice, 'POST', path, body, { csrf: false })
      assert.deepEqual([res.status, codeOf(res)], [403, 'csrf_failed'], path)
    }
  })

  it('GET /api/tasks pages with limit 1..100 and offset ≥ 0; beyond is 400', async () => {
    for (const query of ['limit=101', 'limit=0', 'offset=-1', 'limit=abc'])
      assert.equal((await call(alice, 'GET', `/api/tasks?${query}`)).status, 400, query)
    const page = await call(alice, 'GET', '/api/tasks?limit=1&offset=0')
    assert.equal(page.status, 200)
    assert.equal((page.body.tasks as Task[])[0]!.id, firstTask.id)
    assert.deepEqual((await call(alice, 'GET', '/api/tasks?offset=5')).body.tasks, [])
  })

  it('an async task answers at once and completes through the job, with a new escrow body to sign', async () => {
    const res = await call(alice, 'POST', '/api/tasks', {
      engagement_id: hired.engagement.id,
      text: 'Receipts are leaves in a Merkle tree. Checkpoints sign the root of the tree.',
      async: true,
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const task = res.body.task as Task
    assert.equal(task.state, 'submitted')
    const escrow = res.body.escrow as Escrow
    assert.equal(escrow.state, 'offered')
    assert.equal(escrow.body.task_id, task.id)
    assert.equal(escrow.hash, hashOf(escrow.body))
    await eventually('the async task completes', async () => {
      const now = (await call(alice, 'GET', `/api/tasks/${task.id}`)).body as unknown as Task
      return now.state === 'completed' && now.receipt !== null
    })
    const listed = await call(alice, 'GET', `/api/engagements/${hired.engagement.id}/releases/pending`)
    assert.deepEqual(
      (listed.body.escrows_to_sign as Escrow[]).map((e) => e.id),
      [escrow.id],
    )
  })

  it('GET /api/tasks lists each task as GET /api/tasks/:id answers it: its escrow and its receipt’s ledger index', async () => {
    const list = (await call(alice, 'GET', '/api/tasks')).body.tasks as Array<Task & { escrow_id: string }>
    assert.ok(list.length >= 2)
    await eventually('every receipt is on the ledger', async () => {
      const tasks = (await call(alice, 'GET', '/api/tasks')).body.tasks as Task[]
      return tasks.every((t) => t.receipt?.ledger_index !== null)
    })
    const tasks = (await call(alice, 'GET', '/api/tasks')).body.tasks as Array<Task & { escrow_id: string }>
    const indexes = new Set<number>()
    for (const listed of tasks) {
      const detail = (await call(alice, 'GET', `/api/tasks/${listed.id}`)).body
      assert.deepEqual(listed, detail)
      assert.match(listed.escrow_id, /^esc_/)
      indexes.add(listed.receipt!.ledger_index!)
    }
    // each task its own escrow and its own receipt
    assert.equal(new Set(tasks.map((t) => t.escrow_id)).size, tasks.length)
    assert.equal(indexes.size, tasks.length)
  })

  it('the output is removed after RENTAL_OUTPUT_TTL_S while the receipt stays', async () => {
    await eventually('the output expires', async () => {
      const now = (await call(alice, 'GET', `/api/tasks/${firstTask.id}`)).body as unknown as Task
      return now.output_expired
    })
    const task = (await call(alice, 'GET', `/api/tasks/${firstTask.id}`)).body as unknown as Task
    assert.equal(task.output, null)
    assert.equal(task.output_expired, true)
    assert.match(task.message!, /no longer kept/)
    assert.equal(task.receipt?.leaf_hash, firstTask.receipt!.leaf_hash)
  })

  it('refuses to open an escrow the wallet cannot cover (409 insufficient_funds), changing nothing', async () => {
    const org = alice.me.organization.id
    const left = await balance(`wallet:${org}`)
    await db()
      .transaction()
      .execute((trx) =>
        rail.transfer(trx, {
          idempotencyKey: 'test-drain',
          // the wallet's money back to where it came from: the one kind that may put money into funding
          kind: 'wallet_withdrawal',
          postings: [
            { account: `wallet:${org}`, amount: -left },
            { account: 'external:funding', amount: left },
          ],
        }),
      )
    const res = await call(alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: summariserDid,
      client_did: clientDid,
    })
    const poor = res.body as unknown as Hired
    const escrow = poor.package.escrows[0]!
    const signed = await call(alice, 'POST', `/api/engagements/${poor.engagement.id}/signatures`, {
      sla_signature: sign(poor.package.sla.body),
      escrow_signatures: [{ escrow_id: escrow.body.escrow_id, signature: sign(escrow.body) }],
    })
    assert.deepEqual([signed.status, codeOf(signed)], [409, 'insufficient_funds'])
    const now = (await call(alice, 'GET', `/api/engagements/${poor.engagement.id}`)).body as unknown as Hired
    assert.equal(now.engagement.state, 'pending')
  })

  it('POST /api/tasks refuses a task for an agent the client revoked (409 agent_revoked)', async () => {
    await revokeAgent(db(), alice.me.organization.id, summariserDid, 'test: kill switch')
    const res = await call(alice, 'POST', '/api/tasks', {
      engagement_id: hired.engagement.id,
      text: 'Hello.',
    })
    assert.deepEqual([res.status, codeOf(res)], [409, 'agent_revoked'])
  })
})
