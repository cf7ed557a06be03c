import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate'
import { b64uEncode } from '@svc/trust/base64url'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Answer, type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

const root = fileURLToPath(new URL('../../../../', import.meta.url))
const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: Answer) => (a.body.error as { message?: string } | undefined)?.message ?? ''
const CARD = `sha256:${'3'.repeat(64)}`

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

type Receipt = { id: string; of: string; state: string }
interface Export {
  format: string
  engagement: { id: string; sla: { hash: string; signature: string | null }; escrows: unknown[] }
  addenda: Array<{ to_version: string; signature: string; hash: string; body: Record<string, unknown> }>
  end: { receipt: { id: string } } | null
  tasks: Array<{ id: string; state: string }>
  statement: { engagement_id: string; movements: Array<{ kind: string; engagement_id: string | null }> }
  invoices: Array<{ id: string; number: string; credit_notes: unknown[] }>
  credit_notes: Array<{ number: string; refund_id: string }>
  refunds: Array<{ id: string; state: string }>
  disputes: Array<{ id: string; state: string }>
  ratings: Array<{ task_id: string; score: number }>
  reference: { statement: string } | null
  files: Array<Record<string, unknown>>
  receipts: Receipt[]
}

describe('rental: an engagement’s export (every section, JSON and zip, verified offline) and the end’s loose ends', () => {
  let s: FullStack
  let operator: Client
  let stranger: Client
  let did = ''
  const rail = new JournalRail()
  const dir = mkdtempSync(join(tmpdir(), 'export-end-'))
  const wallet = () => `wallet:${s.alice.me.organization.id}`
  const sign = (key: Ed25519KeyPair, body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const end = (id: string, body?: unknown) => s.call(s.alice, 'POST', `/api/engagements/${id}/end`, body)
  const newTask = async (id: string) => {
    const res = await s.call(s.alice, 'POST', '/api/tasks', { engagement_id: id, text: 'One. Two. Three.' })
    assert.equal(res.status, 200, res.text)
    return (res.body.task as { id: string }).id
  }
  const holdEveryTask = async (id: string) => {
    const res = await s.call(s.alice, 'POST', `/api/engagements/${id}/config`, {
      approval: { mode: 'always' },
    })
    assert.equal(res.status, 200, res.text)
  }
  const escrowOf = (taskId: string) =>
    s.db.selectFrom('escrows').selectAll().where('task_id', '=', taskId).executeTakeFirstOrThrow()
  const returnTransfers = async (escrowId: string) =>
    (
      await s.db
        .selectFrom('rail_transfers')
        .select('id')
        .where('idempotency_key', '=', `end:${escrowId}`)
        .execute()
    ).length
  const returnedEvents = async (escrowId: string) =>
    (
      await s.db
        .selectFrom('rental_events')
        .select(['subjects'])
        .where('type', '=', 'escrow.returned')
        .execute()
    ).filter((e) => (e.subjects as { escrow_id?: string }).escrow_id === escrowId).length
  const raw = (path: string, headers: Record<string, string> = {}) =>
    s.alice.jar.fetch(`${s.rental.url}${path}`, { headers })

  before(async () => {
    // bob (another client) is the operator: he accepts refunds, resolves disputes, releases versions
    s = await startFullStack({ RENTAL_OPERATORS: 'another-client' })
    operator = s.bob
    stranger = await s.signInWith('stranger@export.example')
    did = await s.agentOf('job_summary')
  })
  after(async () => s?.close())

  let exported = ''
  let taskId = ''
  it('a refund of an escrow frozen by a live dispute is refused 409 naming the dispute; once resolved it is asked again', async () => {
    const key = s.newClientKey()
    exported = await s.hireAndSign(s.alice, 'job_summary', did, key)
    // a version released after the hire: the client accepts it by a signed addendum
    const released = await s.call(operator, 'POST', `/api/agents/${encodeURIComponent(did)}/versions`, {
      version: '1.0.0',
      changelog: 'The first release.',
      card_hash: CARD,
    })
    assert.ok(released.status < 300, released.text)
    const version = await s.call(s.alice, 'GET', `/api/engagements/${exported}/version`)
    const { body, hash } = (version.body.pending as { addendum: { body: unknown; hash: string } }).addendum
    const accepted = await s.call(s.alice, 'POST', `/api/engagements/${exported}/version/accept`, {
      addendum_hash: hash,
      signature: sign(key, body),
    })
    assert.equal(accepted.status, 200, accepted.text)
    taskId = await newTask(exported)
    assert.ok(await releaseAndInvoice(s, exported, key))
    const refund = await s.call(s.alice, 'POST', '/api/refunds', {
      task_id: taskId,
      amount_fils: 100,
      reason: 'One paragraph was left out.',
    })
    assert.equal(refund.status, 201, refund.text)
    const refundId = (refund.body as { id: string }).id
    assert.equal((await s.call(operator, 'POST', `/api/refunds/${refundId}/accept`, {})).status, 200)
    const approved = await s.call(operator, 'POST', `/api/refunds/${refundId}/approve`, {})
    assert.equal(approved.status, 200, approved.text)

    const opened = await s.call(s.alice, 'POST', '/api/disputes', {
      task_id: taskId,
      amount_fils: 50,
      reason: 'The summary missed a sentence.',
    })
    assert.equal(opened.status, 201, opened.text)
    const disputeId = (opened.body as { id: string }).id
    const frozen = await s.call(s.alice, 'POST', '/api/refunds', {
      task_id: taskId,
      amount_fils: 10,
      reason: 'Asking again while disputing.',
    })
    assert.deepEqual([frozen.status, codeOf(frozen)], [409, 'escrow_frozen'], frozen.text)
    assert.match(messageOf(frozen), new RegExp(`dispute ${disputeId} \\(open\\)`))
    assert.equal(
      Number(
        (
          await s.db
            .selectFrom('refunds')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('escrow_id', '=', (await escrowOf(taskId)).id)
            .executeTakeFirstOrThrow()
        ).n,
      ),
      1,
    )
    const resolved = await s.call(operator, 'POST', `/api/disputes/${disputeId}/resolve`, {
      outcome: 'provider',
    })
    assert.equal(resolved.status, 200, resolved.text)
    const again = await s.call(s.alice, 'POST', '/api/refunds', {
      task_id: taskId,
      amount_fils: 10,
      reason: 'Asking again after the dispute.',
    })
    assert.equal(again.status, 201, again.text)
    const rejected = await s.call(
      s.alice,
      'POST',
      `/api/refunds/${(again.body as { id: string }).id}/reject`,
      {
        reason: 'Never mind.',
      },
    )
    assert.equal(rejected.status, 200, rejected.text)
  })

  it('exports every section as JSON; every receipt verifies offline with npm run verify', async () => {
    const rated = await s.call(s.alice, 'POST', `/api/tasks/${taskId}/rating`, { score: 4, comment: 'Good.' })
    assert.ok(rated.status < 300, rated.text)
    const referenced = await s.call(s.alice, 'POST', `/api/engagements/${exported}/reference`, {
      statement: 'Summaries on time.',
      show_organization: false,
    })
    assert.ok(referenced.status < 300, referenced.text)
    const file = await s.alice.jar.fetch(`${s.rental.url}/api/engagements/${exported}/files?name=brief.txt`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-csrf-token': s.alice.csrf },
      body: 'The brief of the engagement.',
    })
    assert.equal(file.status, 201)
    assert.equal((await end(exported, { running: 'finish' })).status, 200)

    assert.equal((await s.call(stranger, 'GET', `/api/engagements/${exported}/export`)).status, 404)
    assert.equal((await s.call(s.alice, 'GET', `/api/engagements/${exported}/export?format=tar`)).status, 400)
    let doc: Export | undefined
    const deadline = Date.now() + 20_000
    for (;;) {
      const res = await s.call(s.alice, 'GET', `/api/engagements/${exported}/export`)
      assert.equal(res.status, 200, res.text)
      assert.match(res.headers.get('content-type') ?? '', /application\/json/)
      doc = res.body as unknown as Export
      if (doc.receipts.every((r) => r.state === 'logged')) break
      assert.ok(Date.now() < deadline, `receipts not on the ledger: ${JSON.stringify(doc.receipts)}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    assert.equal(doc.format, 'svc-engagement-export/v1')
    assert.ok(doc.engagement.sla.signature)
    assert.equal(doc.addenda.length, 1)
    assert.equal(doc.addenda[0]!.to_version, '1.0.0')
    assert.equal(doc.addenda[0]!.body.card_hash, CARD)
    assert.ok(doc.addenda[0]!.signature)
    assert.deepEqual(
      doc.tasks.map((t) => [t.id, t.state]),
      [[taskId, 'completed']],
    )
    const kinds = new Set(doc.statement.movements.map((m) => m.kind))
    for (const kind of ['escrow_hold', 'release', 'fee', 'refund']) assert.ok(kinds.has(kind), kind)
    assert.ok(doc.statement.movements.every((m) => m.engagement_id === exported))
    assert.equal(doc.invoices.length, 1)
    assert.equal(doc.invoices[0]!.credit_notes.length, 1)
    assert.equal(doc.credit_notes.length, 1)
    assert.deepEqual(doc.refunds.map((r) => r.state).sort(), ['rejected', 'settled'])
    assert.deepEqual(
      doc.disputes.map((d) => d.state),
      ['resolved'],
    )
    assert.deepEqual(
      doc.ratings.map((r) => [r.task_id, r.score]),
      [[taskId, 4]],
    )
    assert.equal(doc.reference?.statement, 'Summaries on time.')
    assert.equal(doc.files.length, 1)
    assert.equal(doc.files[0]!.name, 'brief.txt')
    assert.ok(!('content' in doc.files[0]!) && !('bytes' in doc.files[0]!))
    assert.deepEqual(doc.receipts.map((r) => r.of.split(':')[0]).sort(), [
      'addendum',
      'dispute',
      'end',
      'refund',
      'release',
      'task',
    ])
    const json = join(dir, 'export.json')
    writeFileSync(json, JSON.stringify(doc))
    const good = await verify(json)
    assert.equal(good.code, 0, good.out)
    assert.match(good.out, /VERIFIED/)
  })

  it('exports a zip (?format=zip or Accept): a manifest, one file per section, bundles and PDFs; verified offline, a changed file fails', async () => {
    const res = await raw(`/api/engagements/${exported}/export?format=zip`)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('content-type'), 'application/zip')
    assert.match(res.headers.get('content-disposition') ?? '', /\.export\.zip"/)
    const bytes = new Uint8Array(await res.arrayBuffer())
    const byAccept = await raw(`/api/engagements/${exported}/export`, { accept: 'application/zip' })
    assert.equal(byAccept.headers.get('content-type'), 'application/zip')
    await byAccept.arrayBuffer()
    const stillJson = await raw(`/api/engagements/${exported}/export`, { accept: '*/*' })
    assert.match(stillJson.headers.get('content-type') ?? '', /application\/json/)
    await stillJson.arrayBuffer()

    const files = unzipSync(bytes)
    const manifest = JSON.parse(strFromU8(files['manifest.json']!)) as {
      format: string
      engagement_id: string
      files: Array<{ path: string }>
      receipts: Array<{ of: string; state: string; path?: string }>
    }
    assert.equal(manifest.format, 'svc-engagement-export/v1')
    assert.equal(manifest.engagement_id, exported)
    for (const section of [
      'engagement.json',
      'sla.json',
      'addenda.json',
      'end.json',
      'tasks.json',
      'statement.json',
      'invoices.json',
      'refunds.json',
      'disputes.json',
      'ratings.json',
      'files.json',
    ])
      assert.ok(files[section], section)
    assert.equal(manifest.receipts.length, 6)
    for (const r of manifest.receipts) {
      assert.equal(r.state, 'logged')
      assert.match(r.path ?? '', /^receipts\/\d{3}-.+\.bundle\.json$/)
      assert.ok(files[r.path!])
    }
    const pdfs = Object.keys(files).filter((p) => p.endsWith('.pdf'))
    assert.equal(pdfs.length, 2)
    for (const p of pdfs) assert.equal(strFromU8(files[p]!.slice(0, 5)), '%PDF-')
    assert.deepEqual(
      manifest.files.map((f) => f.path).sort(),
      Object.keys(files)
        .filter((p) => p !== 'manifest.json')
        .sort(),
    )

    const zip = join(dir, 'export.zip')
    writeFileSync(zip, bytes)
    const good = await verify(zip)
    assert.equal(good.code, 0, good.out)
    assert.match(good.out, /VERIFIED/)
    assert.match(good.out, /ok {3}file invoices\.json/)
    // a receipt changed inside the archive (and its digest in the manifest too): the bundle fails
    const path = manifest.receipts[0]!.path!
    const bundle = JSON.parse(strFromU8(files[path]!)) as { receipt: Record<string, unknown> }
    bundle.receipt.subject = 'someone-else'
    const forged = zipSync({ ...files, [path]: strToU8(JSON.stringify(bundle)) })
    writeFileSync(zip, forged)
    const bad = await verify(zip)
    assert.equal(bad.code, 1, bad.out)
    assert.match(bad.out, /FAIL file receipts\//)
  })

  it('finish: a task rejected after the end gets its escrow back to the wallet once, with its event', async () => {
    const id = await s.hireAndSign(s.alice, 'job_summary', did, s.newClientKey())
    await holdEveryTask(id)
    const held = await newTask(id)
    const escrow = await escrowOf(held)
    assert.equal(escrow.state, 'open')
    const ended = await end(id, { running: 'finish' })
    assert.equal(ended.status, 200, ended.text)
    const outcomes = (ended.body.escrows as Array<{ task_id: string; outcome: string }>).map((e) => [
      e.task_id,
      e.outcome,
    ])
    assert.deepEqual(outcomes, [[held, 'awaiting_task']])
    const before = await rail.balance(s.db, wallet())
    const approvals = await s.call(s.alice, 'GET', '/api/approvals?state=pending')
    const approval = (approvals.body.approvals as Array<{ id: string; task_id: string }>).find(
      (a) => a.task_id === held,
    )!
    const rejected = await s.call(s.alice, 'POST', `/api/approvals/${approval.id}/reject`, { note: 'ended' })
    assert.equal(rejected.status, 200, rejected.text)
    assert.equal((await escrowOf(held)).state, 'returned')
    assert.equal(await rail.balance(s.db, wallet()), before + Number(escrow.amount_fils))
    assert.equal(await returnTransfers(escrow.id), 1)
    assert.equal(await returnedEvents(escrow.id), 1)
    // the failed task is not run again on an ended engagement
    const retried = await s.call(s.alice, 'POST', `/api/tasks/${held}/retry`, {})
    assert.equal(retried.status, 409, retried.text)
  })

  it('finish: a running task with an offered escrow is canceled and the escrow withdrawn; a cancel racing the end returns once', async () => {
    const id = await s.hireAndSign(s.alice, 'job_summary', did, s.newClientKey())
    await holdEveryTask(id)
    const funded = await newTask(id)
    const unfunded = await newTask(id)
    assert.equal((await escrowOf(funded)).state, 'open')
    assert.equal((await escrowOf(unfunded)).state, 'offered')
    const before = await rail.balance(s.db, wallet())
    const cancel = s.call(s.alice, 'POST', `/api/tasks/${funded}/cancel`, {})
    const [ended, canceled] = await Promise.all([end(id, { running: 'finish' }), cancel])
    assert.equal(ended.status, 200, ended.text)
    assert.ok(canceled.status < 300, canceled.text)
    assert.deepEqual(ended.body.canceled_tasks, [unfunded])
    const byTask = new Map(
      (ended.body.escrows as Array<{ task_id: string; outcome: string }>).map((e) => [e.task_id, e.outcome]),
    )
    assert.equal(byTask.get(unfunded), 'withdrawn')
    // the cancel came before the end (returned by the end) or after it (returned by the cancel): once
    assert.ok(['returned', 'awaiting_task'].includes(byTask.get(funded)!), byTask.get(funded))
    const escrow = await escrowOf(funded)
    assert.equal(escrow.state, 'returned')
    assert.equal((await escrowOf(unfunded)).state, 'withdrawn')
    assert.equal(await rail.balance(s.db, wallet()), before + Number(escrow.amount_fils))
    assert.equal(await returnTransfers(escrow.id), 1)
    assert.equal(await returnedEvents(escrow.id), 1)
    const task = await s.call(s.alice, 'GET', `/api/tasks/${unfunded}`)
    assert.equal((task.body.task as { state: string } | undefined)?.state ?? task.body.state, 'canceled')
  })
})
