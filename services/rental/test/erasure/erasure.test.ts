import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { b64uEncode } from '@svc/trust/base64url'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { receiptsAbout } from '@svc/testing/ledger'
import { sha256 } from '../../src/areas/auth/hooks.ts'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack, WRITER } from '../support/full-stack.ts'
import { signIn, type Stack } from '../support/stack.ts'

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const messageOf = (a: { body: Record<string, unknown> }) =>
  (a.body.error as { message?: string } | undefined)?.message

interface Erased {
  org_id: string
  state: string
  engagements_ended: Array<{ engagement_id: string; returned_fils: number; receipt_id: string }>
  deleted: Record<string, number>
  kept: string[]
  receipt: { id: string; leaf_hash: string }
}

describe('rental: erasing a client (POST /api/clients/erase)', () => {
  let s: FullStack
  let carol: Client
  let admin: Client
  let key: Ed25519KeyPair
  let engagement = ''
  let doneTask = ''
  let heldTask = ''
  let fileId = ''
  let incidentId = ''
  const email = 'carol@erase.example'
  const rail = new JournalRail()
  const orgId = () => carol.me.organization.id
  const erase = (who: Client, confirm: unknown = who.me.organization.id) =>
    s.call(who, 'POST', '/api/clients/erase', { confirm })
  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))

  before(async () => {
    s = await startFullStack()
    carol = await s.signInWith(email)
    const did = await s.agentOf('job_summary')
    key = s.newClientKey()
    engagement = await s.hireAndSign(carol, 'job_summary', did, key)
    const done = await s.call(carol, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text: 'Carol’s private notes. They name a person.',
    })
    assert.equal(done.status, 200, done.text)
    doneTask = (done.body.task as { id: string }).id
    // a second task held for approval, its escrow signed: money in escrow the erasure returns
    assert.equal(
      (await s.call(carol, 'POST', `/api/engagements/${engagement}/config`, { approval: { mode: 'always' } }))
        .status,
      200,
    )
    const held = await s.call(carol, 'POST', '/api/tasks', { engagement_id: engagement, text: 'Held text.' })
    assert.equal(held.status, 200, held.text)
    heldTask = (held.body.task as { id: string }).id
    const detail = await s.call(carol, 'GET', `/api/engagements/${engagement}`)
    const pkg = (detail.body.package as { escrows: Array<{ body: unknown; hash: string }> }).escrows
    const signed = await s.call(carol, 'POST', `/api/engagements/${engagement}/signatures`, {
      escrow_signatures: pkg.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
    })
    assert.equal(signed.status, 200, signed.text)
    // personal data around the organization: a file, a token, a webhook, an invited member
    const file = await carol.jar.fetch(`${s.rental.url}/api/engagements/${engagement}/files?name=carol.txt`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-csrf-token': carol.csrf },
      body: 'Carol’s contract, in plain words.',
    })
    assert.equal(file.status, 201, await file.clone().text())
    fileId = ((await file.json()) as { id: string }).id
    assert.equal((await s.call(carol, 'POST', '/api/tokens', { label: 'carol laptop' })).status, 201)
    const hook = await s.call(carol, 'POST', '/api/webhooks', {
      url: 'https://127.0.0.1:9/carol',
      event_types: ['webhook.test'],
    })
    assert.equal(hook.status, 201, hook.text)
    const invited = await s.call(carol, 'POST', '/api/org/members', {
      email: 'admin@erase.example',
      role: 'admin',
    })
    assert.equal(invited.status, 201, invited.text)
    admin = await s.signInWith('admin@erase.example')
    assert.equal(admin.me.organization.id, orgId())
  })
  after(async () => {
    await s?.close()
  })

  it('is the owner’s alone, typed again (confirm), and refused while a completed task’s escrow awaits release', async () => {
    const byAdmin = await erase(admin)
    assert.equal(byAdmin.status, 403, byAdmin.text)
    assert.match(messageOf(byAdmin) ?? '', /clients:erase/)
    const unconfirmed = await erase(carol, 'org_not_mine')
    assert.equal(unconfirmed.status, 400, unconfirmed.text)
    const badBody = await s.call(carol, 'POST', '/api/clients/erase', { confirm: 12 })
    assert.equal(badBody.status, 400)
    const noCsrf = await s.call(carol, 'POST', '/api/clients/erase', { confirm: orgId() }, { csrf: false })
    assert.equal(noCsrf.status, 403)

    const owed = await erase(carol)
    assert.equal(owed.status, 409, owed.text)
    assert.equal(codeOf(owed), 'erasure_refused')
    const escrow = await s.call(carol, 'GET', `/api/tasks/${doneTask}`)
    assert.match(messageOf(owed)!, /await your release/)
    assert.ok(escrow.status === 200)
  })

  it('refuses while a dispute is open, naming it; a withdrawn dispute no longer stands in the way', async () => {
    // the completed task's escrow released (it is owed to the agent)
    const pending = await s.call(carol, 'GET', `/api/engagements/${engagement}/releases/pending`)
    for (const r of pending.body.releases as Array<{ escrow: { hash: string }; instruction: unknown }>) {
      const paid = await s.call(carol, 'POST', `/api/engagements/${engagement}/releases`, {
        escrow_hash: r.escrow.hash,
        instruction: { body: r.instruction, signature: sign(r.instruction) },
      })
      assert.equal(paid.status, 200, paid.text)
    }
    const dispute = await s.call(carol, 'POST', '/api/disputes', {
      task_id: doneTask,
      amount_fils: 1,
      reason: 'Carol disputes one fil.',
    })
    assert.equal(dispute.status, 201, dispute.text)
    const disputeId = (dispute.body as { id: string }).id
    const refused = await erase(carol)
    assert.equal(refused.status, 409, refused.text)
    assert.equal(codeOf(refused), 'erasure_refused')
    assert.match(messageOf(refused)!, new RegExp(disputeId))
    const withdrawn = await s.call(carol, 'POST', `/api/disputes/${disputeId}/withdraw`, {})
    assert.equal(withdrawn.status, 200, withdrawn.text)
    // Carol's words elsewhere: a rating's comment (edited: both comments in its event), a
    // reference, an incident she reported and her note on it
    const rated = await s.call(carol, 'POST', `/api/tasks/${doneTask}/rating`, {
      score: 4,
      comment: 'Carol liked it.',
    })
    assert.equal(rated.status, 200, rated.text)
    const edited = await s.call(carol, 'POST', `/api/tasks/${doneTask}/rating`, {
      score: 5,
      comment: 'Carol loved it.',
      edit: true,
    })
    assert.equal(edited.status, 200, edited.text)
    const reference = await s.call(carol, 'POST', `/api/engagements/${engagement}/reference`, {
      statement: 'Carol recommends this agent.',
      show_organization: true,
    })
    assert.equal(reference.status, 200, reference.text)
    const incident = await s.call(carol, 'POST', '/api/incidents', {
      severity: 'sev3',
      summary: 'Carol saw a slow answer',
      impact: 'Carol waited.',
      engagement_id: engagement,
    })
    assert.equal(incident.status, 201, incident.text)
    incidentId = (incident.body as { id: string }).id
    const note = await s.call(carol, 'POST', `/api/incidents/${incidentId}/note`, {
      text: 'Carol adds a note.',
    })
    assert.equal(note.status, 200, note.text)
  })

  let answer: Erased
  it('erases: the engagement ended and its open escrow back in the wallet, personal data gone, money records kept, a data.erased receipt on the ledger', async () => {
    const wallet = `wallet:${orgId()}`
    const before = await rail.balance(s.db, wallet)
    const res = await erase(carol)
    assert.equal(res.status, 200, res.text)
    answer = res.body as unknown as Erased
    assert.equal(answer.state, 'erased')
    assert.equal(answer.org_id, orgId())
    assert.equal(answer.engagements_ended.length, 1)
    assert.equal(answer.engagements_ended[0]!.engagement_id, engagement)
    const returned = answer.engagements_ended[0]!.returned_fils
    assert.ok(returned > 0, 'the held task’s opened escrow is returned')
    assert.equal(await rail.balance(s.db, wallet), before + returned)
    assert.deepEqual(
      { ...answer.deleted, sessions: 0, events_pseudonymised: 0 },
      {
        members: 2,
        sessions: 0,
        api_tokens: 1,
        webhooks: 1,
        exports: 0,
        files: 1,
        file_bytes: Buffer.byteLength('Carol’s contract, in plain words.'),
        task_texts: 2,
        rating_comments: 1,
        references: 1,
        incident_texts: 1,
        incident_notes: 1,
        dispute_reasons: 1,
        events_pseudonymised: 0,
      },
    )
    assert.ok(answer.deleted.sessions! >= 1, 'the admin’s session ended')
    assert.ok(answer.deleted.events_pseudonymised! > 0)

    // what the database still holds about the organization
    const db = s.db
    const tasks = await db.selectFrom('tasks').selectAll().where('org_id', '=', orgId()).execute()
    assert.equal(tasks.length, 2)
    for (const t of tasks) {
      assert.equal(t.input_text, null)
      assert.equal(t.output_text, null)
      assert.ok(t.input_sha256, 'the hash stays')
    }
    assert.equal(tasks.find((t) => t.id === heldTask)?.state, 'canceled')
    const file = await db
      .selectFrom('rental_files')
      .selectAll()
      .where('id', '=', fileId)
      .executeTakeFirstOrThrow()
    assert.equal(file.state, 'deleted')
    assert.equal(file.sealed_key, null)
    assert.equal(file.name, null)
    const chunks = await db
      .selectFrom('rental_file_chunks')
      .select('idx')
      .where('file_id', '=', fileId)
      .execute()
    assert.equal(chunks.length, 0)
    assert.equal(
      (await db.selectFrom('org_members').select('id').where('org_id', '=', orgId()).execute()).length,
      0,
    )
    assert.equal(
      (await db.selectFrom('api_tokens').select('id').where('org_id', '=', orgId()).execute()).length,
      0,
    )
    assert.equal(
      (await db.selectFrom('webhooks').select('id').where('org_id', '=', orgId()).execute()).length,
      0,
    )
    const org = await db.selectFrom('orgs').selectAll().where('id', '=', orgId()).executeTakeFirstOrThrow()
    assert.doesNotMatch(org.name, /carol/)
    assert.ok(org.erased_at)
    const sessions = await db
      .selectFrom('console_sessions')
      .select(['email', 'name'])
      .where('subject', 'in', [carol.me.client.subject, admin.me.client.subject])
      .execute()
    assert.ok(sessions.every((row) => row.email === null && row.name === null))
    const events = await db
      .selectFrom('rental_events')
      .select(['data', 'actor_id'])
      .where('org_id', '=', orgId())
      .execute()
    assert.doesNotMatch(JSON.stringify(events), /erase\.example|Carol/)
    // free texts she wrote: replaced by [erased] (scores, states and receipts kept), her reference gone
    const rating = await db
      .selectFrom('task_ratings')
      .selectAll()
      .where('task_id', '=', doneTask)
      .executeTakeFirstOrThrow()
    assert.deepEqual([rating.comment, rating.score], ['[erased]', 5])
    const done = await db
      .selectFrom('tasks')
      .select('receipt_leaf_hash')
      .where('id', '=', doneTask)
      .executeTakeFirstOrThrow()
    assert.equal(
      rating.receipt_leaf_hash,
      done.receipt_leaf_hash,
      'the rating stays bound to the task’s receipt',
    )
    assert.equal(
      (
        await db
          .selectFrom('engagement_references')
          .select('engagement_id')
          .where('org_id', '=', orgId())
          .execute()
      ).length,
      0,
    )
    const reported = await db
      .selectFrom('incidents')
      .selectAll()
      .where('id', '=', incidentId)
      .executeTakeFirstOrThrow()
    assert.deepEqual([reported.summary, reported.impact, reported.severity], ['[erased]', '[erased]', 'sev3'])
    const notes = await db
      .selectFrom('incident_notes')
      .select('text')
      .where('incident_id', '=', incidentId)
      .execute()
    assert.deepEqual(
      notes.map((n) => n.text),
      ['[erased]'],
    )
    const disputes = await db
      .selectFrom('disputes')
      .select(['reason', 'state'])
      .where('org_id', '=', orgId())
      .execute()
    assert.deepEqual(disputes, [{ reason: '[erased]', state: 'withdrawn' }])
    // money records stay: the escrows and the released one's transfer
    const escrows = await db.selectFrom('escrows').select(['state']).where('org_id', '=', orgId()).execute()
    assert.ok(escrows.some((e) => e.state === 'released'))
    assert.ok(escrows.some((e) => e.state === 'returned'))

    // the receipt, on the ledger, with counts and no personal data
    const receipts = await receiptsAbout({ url: s.ledger.url, writer: WRITER }, orgId(), (r) =>
      r.some((x) => x.receipt.type === 'data.erased'),
    )
    const erased = receipts.find((x) => x.receipt.type === 'data.erased')!
    assert.equal(erased.leaf_hash, answer.receipt.leaf_hash)
    assert.equal(erased.receipt.data.org_id, orgId())
    assert.deepEqual(erased.receipt.data.engagements_ended, [engagement])
    assert.doesNotMatch(JSON.stringify(erased), /erase\.example|carol/i)
  })

  it('answers a second call from the same session with the first’s result; the other members are signed out', async () => {
    const again = await erase(carol, orgId())
    assert.equal(again.status, 200, again.text)
    assert.deepEqual(again.body, answer)
    const adminNow = await s.call(admin, 'GET', '/api/me')
    assert.equal(adminNow.status, 401)
    const session = await s.db
      .selectFrom('console_sessions')
      .select('ended_at')
      .where('id_hash', '=', sha256(admin.jar.get('rental_session')!))
      .executeTakeFirstOrThrow()
    assert.ok(session.ended_at)
  })

  it('signing in again starts a new organization, with nothing of the erased one', async () => {
    const fresh = await signIn({ idp: s.idp, rental: s.rental } as unknown as Stack, undefined, {
      freshIdpSession: true,
      account: { email, password: `password-of-${email}` },
    })
    assert.notEqual(fresh.me.organization.id, answer.org_id)
    assert.equal(fresh.me.organization.role, 'owner')
    const tasks = await s.call(fresh, 'GET', '/api/tasks')
    assert.equal(tasks.status, 200)
    assert.deepEqual(tasks.body.tasks, [])
    const old = await s.call(fresh, 'GET', `/api/engagements/${engagement}`)
    assert.equal(old.status, 404)
  })
})
