import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Part } from '@a2a-js/sdk'
import { fileParts } from '../../src/areas/tasks/file-handoff.ts'
import type { TaskDeps } from '../../src/areas/tasks/service.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

type Body = Record<string, unknown>

const REPORT =
  'Quarterly report of the Dubai branch. ' +
  'The branch opened two new offices in the third quarter. ' +
  'Revenue of the offices grew by twelve percent over the quarter. ' +
  'The offices hired forty engineers for the new platform team. ' +
  'Weather in the quarter was hot. ' +
  'The platform team shipped the ledger integration for the offices.'

describe('rental tasks hand their engagement’s files to the agent (A2A url file parts, signed short-lived URLs)', () => {
  let s: FullStack
  let agentDid = ''
  let engagement = ''
  let other = ''
  let held = ''
  let report: { id: string; sha256: string; size_bytes: number }
  let otherFile = ''

  const upload = async (
    who: Client,
    engagementId: string,
    name: string,
    body: string,
    type = 'text/plain',
  ) => {
    const res = await who.jar.fetch(
      `${s.rental.url}/api/engagements/${engagementId}/files?name=${encodeURIComponent(name)}`,
      { method: 'POST', headers: { 'content-type': type, 'x-csrf-token': who.csrf }, body },
    )
    assert.equal(res.status, 201, await res.clone().text())
    return (await res.json()) as { id: string; sha256: string; size_bytes: number }
  }
  /** A signed URL as the rental hands it, for `taskId` and the file, valid `ttlS` from `now`. */
  const urlFor = (taskId: string, fileId: string, now = new Date(), ttlS = 600) => {
    const deps = {
      config: { ...s.rental.ctx.config, fileUrlTtlS: ttlS },
      now: () => now,
      baseUrl: s.rental.url,
    } as unknown as TaskDeps
    const [part] = fileParts(deps, taskId, [
      { id: fileId, name: 'x.txt', content_type: 'text/plain', sha256: '00', size_bytes: 1 } as never,
    ]) as [Part]
    assert.equal(part.content?.$case, 'url')
    return (part.content as { value: string }).value
  }

  before(async () => {
    s = await startFullStack()
    agentDid = await s.agentOf('job_summary')
    engagement = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    other = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    held = await s.hireAndSign(s.alice, 'job_summary', agentDid, s.newClientKey())
    const config = await s.call(s.alice, 'POST', `/api/engagements/${held}/config`, {
      approval: { mode: 'always' },
    })
    assert.equal(config.status, 200, config.text)
    report = await upload(s.alice, engagement, 'report.txt', REPORT)
    otherFile = (await upload(s.alice, other, 'other.txt', 'Another engagement’s file. It stays there.')).id
  })
  after(async () => s.close())

  it('the summariser reads the uploaded file over its signed URL and summarises its text', async () => {
    const res = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text: 'Summarise the attached report.',
      file_ids: [report.id, report.id],
    })
    assert.equal(res.status, 200, res.text)
    const task = res.body.task as Body
    assert.equal(task.state, 'completed', res.text)
    assert.deepEqual(task.file_ids, [report.id])
    const data = (task.output as { data: Body }).data
    // the summary is of the file, not of the instruction
    assert.match((task.output as { text: string }).text, /offices/)
    assert.doesNotMatch((task.output as { text: string }).text, /attached/)
    assert.equal(data.sentence_count, 6)
    assert.deepEqual(data.files, [
      { filename: 'report.txt', sha256: report.sha256, size_bytes: report.size_bytes },
    ])
    // the agent's read is an event of the file and the task
    const audit = await s.call(s.alice, 'GET', '/api/audit?type=file.handed')
    const handed = (audit.body.events as Array<{ subjects: Body; actor: Body }>).filter(
      (e) => e.subjects.task_id === task.id,
    )
    assert.equal(handed.length, 1)
    assert.equal(handed[0]!.subjects.file_id, report.id)
    assert.equal(handed[0]!.actor.type, 'agent')
    assert.equal(handed[0]!.actor.id, agentDid)
    // after the task ended, its URL no longer opens the file
    const late = await fetch(urlFor(task.id as string, report.id))
    assert.equal(late.status, 403)
    assert.equal(((await late.json()) as { error: Body }).error.code, 'file_url_expired')
  })

  it('refuses another engagement’s file, another organization’s, an unknown one, and malformed lists', async () => {
    for (const file_ids of [[otherFile], ['fil_nope'], [report.id, otherFile]]) {
      const res = await s.call(s.alice, 'POST', '/api/tasks', {
        engagement_id: engagement,
        text: 'Read it.',
        file_ids,
      })
      assert.equal(res.status, 404, res.text)
      assert.equal((res.body.error as Body).code, 'file_not_found')
    }
    const bobs = await s.hireAndSign(s.bob, 'job_summary', agentDid, s.newClientKey())
    const cross = await s.call(s.bob, 'POST', '/api/tasks', {
      engagement_id: bobs,
      text: 'Read it.',
      file_ids: [report.id],
    })
    assert.equal(cross.status, 404, cross.text)
    for (const file_ids of ['fil_x', [1], [''], Array.from({ length: 21 }, (_, i) => `fil_${i}`)]) {
      const res = await s.call(s.alice, 'POST', '/api/tasks', {
        engagement_id: engagement,
        text: 'Read it.',
        file_ids,
      })
      assert.equal(res.status, 400, `${JSON.stringify(file_ids)}: ${res.text}`)
    }
    // nothing was made by the refusals
    const { count } = await s.db
      .selectFrom('tasks')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('input_text', '=', 'Read it.')
      .executeTakeFirstOrThrow()
    assert.equal(Number(count), 0)
  })

  it('a running task’s URL opens its file; a tampered, expired or misapplied one is refused (403), never the bytes', async () => {
    // held for approval: the task waits (input-required), so its URLs are live
    const heldFile = await upload(
      s.alice,
      held,
      'held.md',
      '# Held\n\nA held file. It waits.',
      'text/markdown',
    )
    const task = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: held,
      text: 'Summarise the held file.',
      file_ids: [heldFile.id],
    })
    assert.equal(task.status, 200, task.text)
    const taskId = (task.body.task as Body).id as string
    assert.equal((task.body.task as Body).state, 'input-required')
    const url = urlFor(taskId, heldFile.id)
    const ok = await fetch(url)
    assert.equal(ok.status, 200)
    assert.equal(await ok.text(), '# Held\n\nA held file. It waits.')
    assert.match(ok.headers.get('content-type')!, /^text\/markdown/)
    assert.equal(ok.headers.get('cache-control'), 'private, no-store')
    const refused = async (href: string, code: string, status = 403) => {
      const r = await fetch(href)
      const text = await r.text()
      assert.equal(r.status, status, `${href}: ${text}`)
      assert.equal((JSON.parse(text) as { error: Body }).error.code, code)
      assert.ok(!text.includes('held file'))
    }
    const token = new URL(url).searchParams.get('token')!
    const [tid, exp, mac] = token.split('.') as [string, string, string]
    const flip = (c: string) => (c === 'A' ? 'B' : 'A')
    const withToken = (t: string, file = heldFile.id) =>
      `${s.rental.url}/api/files/${file}/content?token=${encodeURIComponent(t)}`
    await refused(withToken(`${tid}.${exp}.${flip(mac[0]!)}${mac.slice(1)}`), 'file_url_invalid')
    await refused(withToken(`${tid}.${Number(exp) + 3600}.${mac}`), 'file_url_invalid')
    // the token of one file does not open another (the held task's, or another engagement's)
    await refused(withToken(token, otherFile), 'file_url_invalid')
    await refused(withToken(token, report.id), 'file_url_invalid')
    // signed right but for a file the task does not name: refused too
    await refused(urlFor(taskId, otherFile), 'file_url_invalid')
    // expired: signed an hour ago for ten minutes
    await refused(urlFor(taskId, heldFile.id, new Date(Date.now() - 3_600_000)), 'file_url_expired')
    await refused(withToken('garbage'), 'file_url_invalid')
    const noToken = await fetch(`${s.rental.url}/api/files/${heldFile.id}/content`)
    assert.equal(noToken.status, 400)

    // the file deleted while the task waits: its URL is 404, and the task fails when it runs
    const deleted = await s.call(s.alice, 'DELETE', `/api/files/${heldFile.id}`)
    assert.equal(deleted.status, 204, deleted.text)
    await refused(url, 'file_not_found', 404)
    const approvals = await s.call(s.alice, 'GET', '/api/approvals?state=pending')
    const approval = (approvals.body.approvals as Array<{ id: string; task_id: string }>).find(
      (a) => a.task_id === taskId,
    )!
    assert.equal((await s.call(s.alice, 'POST', `/api/approvals/${approval.id}/approve`, {})).status, 200)
    let ended: Body = {}
    await eventually('the task with a deleted file fails', async () => {
      ended = (await s.call(s.alice, 'GET', `/api/tasks/${taskId}`)).body
      return ended.state === 'failed'
    })
    assert.match(ended.error as string, /file/)
    assert.equal(ended.receipt, null)
  })

  it('the A2A surface takes file_ids in the message metadata', async () => {
    const issued = await s.call(s.alice, 'POST', '/api/tokens', { label: 'files' })
    const token = issued.body.token as string
    const rpc = async (metadata: Body) => {
      const res = await fetch(`${s.rental.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'SendMessage',
          params: {
            message: {
              messageId: `m-${Math.random()}`,
              role: 'ROLE_USER',
              parts: [{ text: 'Summarise the attached report.' }],
              metadata: { engagement_id: engagement, ...metadata },
            },
          },
        }),
      })
      assert.equal(res.status, 200)
      return (await res.json()) as { result?: Body; error?: { code: number; message: string } }
    }
    const done = await rpc({ file_ids: [report.id] })
    assert.ok(done.result, JSON.stringify(done))
    const task = (done.result.task ?? done.result) as { id: string }
    const view = (await s.call(s.alice, 'GET', `/api/tasks/${task.id}`)).body
    assert.equal(view.state, 'completed', JSON.stringify(view))
    assert.deepEqual(view.file_ids, [report.id])
    assert.deepEqual(((view.output as { data: Body }).data.files as Body[])[0]!.sha256, report.sha256)
    const foreign = await rpc({ file_ids: [otherFile] })
    assert.equal(foreign.error?.code, -32602, JSON.stringify(foreign))
    assert.match(foreign.error!.message, /no file/)
    const malformed = await rpc({ file_ids: 'fil_x' })
    assert.equal(malformed.error?.code, -32602, JSON.stringify(malformed))
  })
})
