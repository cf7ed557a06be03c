import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

const root = fileURLToPath(new URL('../../../../', import.meta.url))
const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: { body: Record<string, unknown> }) =>
  (a.body.error as { message?: string } | undefined)?.message

type Ended = {
  state: string
  canceled_tasks: string[]
  escrows: Array<{ escrow_id: string; task_id: string | null; outcome: string; amount_fils: number }>
  figures: Record<string, number>
  statement: Record<string, { amount_fils: number; display: string }>
  receipt: { id: string; leaf_hash: string }
}

/** Runs `npm run verify`'s script on a file: its exit code and output. */
function verify(file: string) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/ledger-verify.ts', file], {
      cwd: root,
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    child.on('close', (code) => resolve({ code, out }))
  })
}

describe('rental: ending an engagement (finish or cancel, escrows settled once) and its export', () => {
  let s: FullStack
  let stranger: Client
  let did = ''
  const rail = new JournalRail()
  const wallet = () => `wallet:${s.alice.me.organization.id}`
  const sign = (key: Ed25519KeyPair, body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const end = (id: string, body?: unknown, who?: Client) =>
    s.call(who ?? s.alice, 'POST', `/api/engagements/${id}/end`, body)
  const holdEveryTask = async (id: string) => {
    const res = await s.call(s.alice, 'POST', `/api/engagements/${id}/config`, {
      approval: { mode: 'always' },
    })
    assert.equal(res.status, 200, res.text)
  }
  const newTask = (id: string) =>
    s.call(s.alice, 'POST', '/api/tasks', { engagement_id: id, text: 'One. Two. Three.' })

  before(async () => {
    s = await startFullStack()
    stranger = await s.signInWith('stranger@ending.example')
    did = await s.agentOf('job_summary')
  })
  after(async () => {
    await s?.close()
  })

  let ended = ''
  let endedKey: Ed25519KeyPair
  it('cancel: the held task is canceled, its opened escrow returned to the wallet once; completed work stays for the client’s release', async () => {
    endedKey = s.newClientKey()
    const id = await s.hireAndSign(s.alice, 'job_summary', did, endedKey)
    ended = id
    const done = await newTask(id)
    assert.equal(done.status, 200, done.text)
    const doneId = (done.body.task as { id: string; state: string }).id
    await holdEveryTask(id)
    const held = await newTask(id)
    assert.equal(held.status, 200, held.text)
    const heldId = (held.body.task as { id: string }).id
    // the held task's escrow is signed, so its money is in escrow
    const detail = await s.call(s.alice, 'GET', `/api/engagements/${id}`)
    const pkg = (detail.body.package as { escrows: Array<{ body: unknown; hash: string }> }).escrows
    assert.equal(pkg.length, 1)
    const signed = await s.call(s.alice, 'POST', `/api/engagements/${id}/signatures`, {
      escrow_signatures: [{ escrow_hash: pkg[0]!.hash, signature: sign(endedKey, pkg[0]!.body) }],
    })
    assert.equal(signed.status, 200, signed.text)
    assert.equal((await end(id, { running: 'cancel' }, stranger)).status, 404)

    const before = await rail.balance(s.db, wallet())
    const res = await end(id, { running: 'cancel' })
    assert.equal(res.status, 200, res.text)
    const answer = res.body as unknown as Ended
    assert.equal(answer.state, 'ended')
    assert.deepEqual(answer.canceled_tasks, [heldId])
    const byTask = new Map(answer.escrows.map((e) => [e.task_id, e]))
    assert.equal(byTask.get(heldId)?.outcome, 'returned')
    assert.equal(byTask.get(doneId)?.outcome, 'pending_release')
    const price = byTask.get(heldId)!.amount_fils
    assert.ok(price > 0)
    assert.equal(answer.figures.returned_fils, price)
    assert.equal(answer.figures.pending_release_fils, byTask.get(doneId)!.amount_fils)
    assert.equal(answer.statement.returned!.amount_fils, price)
    assert.equal(await rail.balance(s.db, wallet()), before + price)
    const task = await s.call(s.alice, 'GET', `/api/tasks/${heldId}`)
    assert.equal((task.body.task as { state: string } | undefined)?.state ?? task.body.state, 'canceled')

    // ending twice: 409 naming the state, and the wallet does not move again
    const again = await end(id, { running: 'cancel' })
    assert.equal(again.status, 409)
    assert.equal(codeOf(again), 'engagement_ended')
    assert.match(messageOf(again) ?? '', /ended/)
    assert.equal(await rail.balance(s.db, wallet()), before + price)
    // no task after the end
    const late = await newTask(id)
    assert.equal(late.status, 409, late.text)
    assert.equal(codeOf(late), 'engagement_ended')
    // the completed task's escrow is still the client's to release, by signed instruction
    await releaseAndInvoice(s, id, endedKey)
    const row = await s.db
      .selectFrom('escrows')
      .select('state')
      .where('task_id', '=', doneId)
      .executeTakeFirstOrThrow()
    assert.equal(row.state, 'released')
  })

  it('finish: concurrent ends settle on one; the unused package escrow is returned once', async () => {
    const id = await s.hireAndSign(s.alice, 'job_summary', did, s.newClientKey())
    const before = await rail.balance(s.db, wallet())
    const answers = await Promise.all([end(id), end(id, { running: 'finish' }), end(id, {})])
    assert.deepEqual(
      answers.map((a) => a.status).sort(),
      [200, 409, 409],
      answers.map((a) => a.text).join('\n'),
    )
    const won = answers.find((a) => a.status === 200)!.body as unknown as Ended
    assert.equal(won.escrows.length, 1)
    assert.equal(won.escrows[0]!.outcome, 'returned')
    const price = won.escrows[0]!.amount_fils
    assert.equal(await rail.balance(s.db, wallet()), before + price)
    const transfers = await s.db
      .selectFrom('rail_transfers')
      .select('id')
      .where('idempotency_key', '=', `end:${won.escrows[0]!.escrow_id}`)
      .execute()
    assert.equal(transfers.length, 1)
  })

  it('finish: a task still running keeps its escrow (awaiting its end); a pending engagement does not end', async () => {
    const id = await s.hireAndSign(s.alice, 'job_summary', did, s.newClientKey())
    await holdEveryTask(id)
    const held = await newTask(id)
    const heldId = (held.body.task as { id: string }).id
    const res = await end(id, { running: 'finish' })
    assert.equal(res.status, 200, res.text)
    const answer = res.body as unknown as Ended
    assert.deepEqual(answer.canceled_tasks, [])
    assert.equal(answer.escrows.find((e) => e.task_id === heldId)?.outcome, 'awaiting_task')
    const task = await s.call(s.alice, 'GET', `/api/tasks/${heldId}`)
    assert.equal(
      (task.body.task as { state: string } | undefined)?.state ?? task.body.state,
      'input-required',
    )

    const hired = await s.call(s.alice, 'POST', '/api/engagements', {
      job_id: 'job_summary',
      agent_did: did,
      client_did: didKeyFromEd25519(s.newClientKey().publicKey),
    })
    assert.equal(hired.status, 200, hired.text)
    const refused = await end((hired.body.engagement as { id: string }).id)
    assert.equal(refused.status, 409)
    assert.equal(codeOf(refused), 'engagement_not_active')
    assert.match(messageOf(refused) ?? '', /pending/)
    assert.equal((await end(id, { running: 'later' })).status, 400)
  })

  it('export: everything about the ended engagement, every receipt verified offline by npm run verify', async () => {
    assert.equal((await s.call(stranger, 'GET', `/api/engagements/${ended}/export`)).status, 404)
    let doc: { format: string; receipts: Array<{ state: string; of: string }>; tasks: unknown[] } | undefined
    const deadline = Date.now() + 15_000
    for (;;) {
      const res = await s.call(s.alice, 'GET', `/api/engagements/${ended}/export`)
      assert.equal(res.status, 200, res.text)
      doc = res.body as unknown as typeof doc
      if (doc!.receipts.every((r) => r.state === 'logged')) break
      assert.ok(Date.now() < deadline, `receipts not on the ledger: ${JSON.stringify(doc!.receipts)}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    assert.equal(doc!.format, 'svc-engagement-export/v1')
    assert.equal(doc!.tasks.length, 2)
    const kinds = doc!.receipts.map((r) => r.of.split(':')[0]).sort()
    assert.deepEqual(kinds, ['end', 'release', 'task'])
    const dir = mkdtempSync(join(tmpdir(), 'export-'))
    const file = join(dir, 'export.json')
    writeFileSync(file, JSON.stringify(doc))
    const good = await verify(file)
    assert.equal(good.code, 0, good.out)
    assert.match(good.out, /VERIFIED/)
    // a changed receipt does not verify
    const forged = JSON.parse(readFileSync(file, 'utf8')) as {
      receipts: Array<{ bundle: { receipt: Record<string, unknown> } }>
    }
    forged.receipts[0]!.bundle.receipt.subject = 'someone-else'
    writeFileSync(file, JSON.stringify(forged))
    const bad = await verify(file)
    assert.equal(bad.code, 1, bad.out)
  })
})
