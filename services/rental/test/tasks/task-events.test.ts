import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { b64uEncode } from '@svc/trust/base64url'
import type { Ed25519KeyPair } from '@svc/trust/ed25519'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { Browser } from 'playwright-core'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { sql } from 'kysely'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface StreamEvent {
  id: string
  event: string
  data: {
    type: string
    stream_seq: number
    actor: { type: string; id: string | null }
    data: Record<string, unknown>
  }
}

/** A server-sent events body as a reader sees it (WHATWG HTML §9.2): events, comments and `retry:`. */
function parseSse(text: string) {
  const events: StreamEvent[] = []
  const comments: string[] = []
  let retry: number | undefined
  for (const block of text.split('\n\n')) {
    const fields: Record<string, string> = {}
    for (const line of block.split('\n')) {
      if (line === '') continue
      if (line.startsWith(':')) comments.push(line.slice(1).trim())
      const at = line.indexOf(':')
      if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, '')
    }
    if (fields.retry) retry = Number(fields.retry)
    if (fields.data)
      events.push({
        id: fields.id!,
        event: fields.event!,
        data: JSON.parse(fields.data) as StreamEvent['data'],
      })
  }
  return { events, comments, retry }
}

const executable = chromiumPath()

describe('a task’s events as server-sent events (GET /api/tasks/{id}/events)', () => {
  let stack: FullStack
  let engagement: string
  let agentDid: string
  let clientKey: Ed25519KeyPair
  let syncTask: string
  let asyncTask: string
  const TEXT = 'Every change of a task is an event. The events of a task are read as a stream, in order.'

  const post = async (async: boolean) => {
    const res = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: engagement,
      text: TEXT,
      async,
    })
    assert.equal(res.status, 200, res.text)
    return (res.body.task as { id: string }).id
  }
  const state = async (id: string) => (await stack.call(stack.alice, 'GET', `/api/tasks/${id}`)).body.state
  /** The whole stream, read until the server ends it. */
  const read = async (id: string, query = '', headers: Record<string, string> = {}) => {
    const res = await stack.alice.jar.fetch(`${stack.rental.url}/api/tasks/${id}/events${query}`, { headers })
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
  }
  const summary = (events: StreamEvent[]) =>
    events.map((e) => {
      const d = e.data.data
      const what = e.event === 'task.state_changed' ? `${String(d.from)}>${String(d.to)}` : ''
      return `${e.id} ${e.event}${what ? ` ${what}` : ''} ${e.data.actor.type}`
    })

  before(async () => {
    stack = await startFullStack({
      RENTAL_EVENTS_STREAM_S: '4',
      RENTAL_TASK_RETRIES: '4',
      RENTAL_TASK_RETRY_BASE_MS: '200',
    })
    agentDid = await stack.agentOf('job_summary')
    clientKey = stack.newClientKey()
    engagement = await stack.hireAndSign(stack.alice, 'job_summary', agentDid, clientKey)
    syncTask = await post(false)
    asyncTask = await post(true)
    await eventually('the async task completes', async () => (await state(asyncTask)) === 'completed')
  })
  after(async () => stack.close())

  it('gives a sync task’s events in order, with their types and actors, and ends at its terminal state', async () => {
    const res = await read(syncTask)
    assert.equal(res.status, 200, res.text)
    assert.match(res.type ?? '', /^text\/event-stream/)
    const { events, retry } = parseSse(res.text)
    assert.equal(retry, 3000)
    assert.deepEqual(summary(events), [
      '1 task.created user',
      '2 task.trace agent',
      '3 task.state_changed working>completed user',
    ])
    const [created, trace, completed] = events
    assert.equal(created!.data.actor.id, stack.alice.me.client.subject)
    assert.equal(trace!.data.actor.id, agentDid)
    assert.equal(trace!.data.data.agent_state, 'TASK_STATE_COMPLETED')
    const receipt = (await stack.call(stack.alice, 'GET', `/api/tasks/${syncTask}`)).body.receipt as {
      id: string
      leaf_hash: string
    }
    assert.equal(completed!.data.data.receipt_id, receipt.id)
    assert.equal(completed!.data.data.leaf_hash, receipt.leaf_hash)
  })

  it('gives an async task’s events: created by the user, run by the system', async () => {
    const { events } = parseSse((await read(asyncTask)).text)
    assert.deepEqual(summary(events), [
      '1 task.created user',
      '2 task.state_changed submitted>working system',
      '3 task.trace agent',
      '4 task.state_changed working>completed system',
    ])
  })

  it('continues after the N-th event with after=N, and with Last-Event-ID, which wins', async () => {
    assert.deepEqual(
      parseSse((await read(asyncTask, '?after=2')).text).events.map((e) => e.id),
      ['3', '4'],
    )
    assert.deepEqual(
      parseSse((await read(asyncTask, '?after=0', { 'last-event-id': '3' })).text).events.map((e) => e.id),
      ['4'],
    )
    // an ended task with nothing after the N-th: 204, which stops a browser's EventSource
    assert.equal((await read(asyncTask, '?after=4')).status, 204)
  })

  it('refuses a bad cursor (400) and another organization’s or an unknown task (404), before any stream', async () => {
    for (const query of ['?after=-1', '?after=abc', '?after=1.5', '?after=1e309']) {
      const res = await read(syncTask, query)
      assert.equal(res.status, 400, `${query}: ${res.text}`)
      assert.equal((JSON.parse(res.text) as { error: { code: string } }).error.code, 'invalid_request')
    }
    const header = await read(syncTask, '', { 'last-event-id': 'evt_3' })
    assert.equal(header.status, 400, header.text)
    assert.match(header.text, /last-event-id/)
    const bobs = await stack.bob.jar.fetch(`${stack.rental.url}/api/tasks/${syncTask}/events`)
    assert.equal(bobs.status, 404)
    assert.match(bobs.headers.get('content-type') ?? '', /json/)
    assert.equal(((await bobs.json()) as { error: { code: string } }).error.code, 'task_not_found')
    assert.equal((await read('tsk_unknown')).status, 404)
    const anonymous = await fetch(`${stack.rental.url}/api/tasks/${syncTask}/events`)
    assert.equal(anonymous.status, 401)
  })

  it('records the engagement’s, its escrows’ and the organization’s changes with their actor', async () => {
    const pending = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}/releases/pending`)
    const first = (pending.body.releases as Array<{ escrow: { hash: string }; instruction: unknown }>)[0]!
    const released = await stack.call(stack.alice, 'POST', `/api/engagements/${engagement}/releases`, {
      escrow_hash: first.escrow.hash,
      instruction: {
        body: first.instruction,
        signature: b64uEncode(signEd25519(clientKey.seed, canonicalBytes(first.instruction))),
      },
    })
    assert.equal(released.status, 200, released.text)
    const config = await stack.call(stack.alice, 'POST', `/api/engagements/${engagement}/config`, {
      default_language: 'ar',
    })
    assert.equal(config.status, 200, config.text)
    const invited = await stack.call(stack.alice, 'POST', '/api/org/members', {
      email: 'events@example.com',
      role: 'viewer',
    })
    assert.equal(invited.status, 201, invited.text)
    const member = (invited.body as { id: string }).id
    assert.equal(
      (await stack.call(stack.alice, 'POST', `/api/org/members/${member}/role`, { role: 'member' })).status,
      200,
    )
    assert.equal((await stack.call(stack.alice, 'DELETE', `/api/org/members/${member}`)).status, 200)
    const { rows } = await sql<{
      type: string
      actor_type: string
      actor_id: string
      data: Record<string, unknown>
    }>`
      select type, actor_type, actor_id, data from rental_events
      where org_id = ${stack.alice.me.organization.id} and (stream = ${engagement} or stream is null)
      order by seq`.execute(stack.db)
    const alice = stack.alice.me.client.subject
    assert.deepEqual(
      rows
        .filter((r) => r.type !== 'member.joined' && r.type !== 'request.answered') // request.answered: the audit's
        .map((r) => `${r.type} ${r.actor_type}:${r.actor_id === alice}`),
      [
        'engagement.created user:true',
        'engagement.activated user:true',
        'escrow.opened user:true',
        'escrow.released user:true',
        'engagement.config_changed user:true',
        'member.invited user:true',
        'member.role_changed user:true',
        'member.removed user:true',
      ],
    )
    assert.ok(rows.some((r) => r.type === 'member.joined' && r.data.role === 'owner'))
    assert.deepEqual(rows.find((r) => r.type === 'member.role_changed')!.data, {
      from: 'viewer',
      to: 'member',
    })
  })

  it(
    'collects the events in Chromium with a browser EventSource, which stops after the end',
    { skip: executable ? false : NO_CHROMIUM },
    async () => {
      let browser: Browser | undefined
      try {
        browser = await launchChromium(executable!)
        const context = await browser.newContext()
        await context.addCookies([
          { name: 'rental_session', value: stack.alice.jar.get('rental_session')!, url: stack.rental.url },
        ])
        const page = await context.newPage()
        await page.goto(`${stack.rental.url}/api/me`)
        const seen = await page.evaluate(async (id) => {
          const got: Array<{ id: string; type: string; data: string }> = []
          const source = new EventSource(`/api/tasks/${id}/events`)
          for (const type of ['task.created', 'task.trace', 'task.state_changed'])
            source.addEventListener(type, (e) => {
              const m = e as unknown as { lastEventId: string; type: string; data: string }
              got.push({ id: m.lastEventId, type: m.type, data: m.data })
            })
          // the server ends the stream at the terminal state; the browser reconnects with
          // Last-Event-ID, is answered 204, and closes for good
          await new Promise<void>((resolve) => {
            const check = setInterval(() => {
              if (source.readyState === EventSource.CLOSED) {
                clearInterval(check)
                resolve()
              }
            }, 50)
          })
          return got
        }, asyncTask)
        assert.deepEqual(
          seen.map((e) => `${e.id} ${e.type}`),
          ['1 task.created', '2 task.state_changed', '3 task.trace', '4 task.state_changed'],
        )
        assert.equal((JSON.parse(seen[3]!.data) as { data: { to: string } }).data.to, 'completed')
      } finally {
        await browser?.close()
      }
    },
  )

  it('keeps a running task’s stream open and sends the events written later: failed attempts, then its cancel', async () => {
    // the agents are down: the task fails its attempts and waits between them (this test is the last)
    await stack.agents.close()
    const running = await post(true)
    const res = await stack.alice.jar.fetch(`${stack.rental.url}/api/tasks/${running}/events`)
    assert.equal(res.status, 200)
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
    let text = ''
    const until = async (what: string, done: () => boolean) => {
      while (!done()) {
        const chunk = await reader.read()
        if (chunk.done) throw new Error(`the stream ended before ${what}: ${text}`)
        text += chunk.value
      }
    }
    await until('a failed attempt', () => parseSse(text).events.some((e) => e.event === 'task.trace'))
    const canceled = await stack.call(stack.alice, 'POST', `/api/tasks/${running}/cancel`)
    assert.equal(canceled.status, 200, canceled.text)
    for (;;) {
      const chunk = await reader.read()
      if (chunk.done) break
      text += chunk.value
    }
    const events = parseSse(text).events
    assert.deepEqual(summary(events).slice(0, 3), [
      '1 task.created user',
      '2 task.state_changed submitted>working system',
      '3 task.trace system',
    ])
    assert.equal(events[2]!.data.data.attempt, 1)
    assert.match(String(events[2]!.data.data.error), /./)
    const last = events[events.length - 1]!
    assert.equal(last.event, 'task.state_changed')
    assert.deepEqual([last.data.data.to, last.data.actor.type], ['canceled', 'user'])
    // a stream of a task still running ends at the bound (RENTAL_EVENTS_STREAM_S), for the client to reconnect
    const bounded = await post(true)
    const again = await read(bounded)
    assert.equal(again.status, 200)
    assert.ok(parseSse(again.text).events.length >= 1, again.text)
  })
})
