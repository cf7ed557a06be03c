import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { signature } from '../../src/areas/webhooks/deliver.ts'
import { readRentalConfig } from '../../src/config.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

interface Delivery {
  id: string
  event_id: string
  event_type: string
  state: string
  attempt_count: number
  attempts: Array<{
    attempt: number
    at: string
    status: number | null
    duration_ms: number
    error: string | null
  }>
  next_attempt_at: string | null
}
interface Payload {
  type: string
  timestamp: string
  data: { event_id: string; subjects: Record<string, string>; actor: { type: string }; details: unknown }
}
interface Received {
  path: string
  id: string
  payload: Payload
  status: number
}

/**
 * A receiver as a client would run one: every request verified with the `standardwebhooks`
 * package (an independent implementation of the scheme) against the secret of the webhook its path
 * names. `/flaky` answers 500 to the first two calls of each message, then 204; `/down` always 500.
 */
class Receiver {
  readonly secrets = new Map<string, string>()
  readonly calls: Received[] = []
  readonly unverified: string[] = []
  readonly #seen = new Map<string, number>()
  #server: Server | undefined
  url = ''

  async start() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const path = req.url ?? ''
        const body = Buffer.concat(chunks).toString('utf8')
        const headers = Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h])]),
        )
        let payload: Payload
        try {
          payload = new Webhook(this.secrets.get(path) ?? 'whsec_AAAA').verify(body, headers) as Payload
        } catch (err) {
          this.unverified.push(`${path}: ${(err as Error).message}`)
          res.writeHead(401).end()
          return
        }
        const id = headers['webhook-id']!
        const seen = (this.#seen.get(id) ?? 0) + 1
        this.#seen.set(id, seen)
        const status = path === '/down' || (path === '/flaky' && seen <= 2) ? 500 : 204
        this.calls.push({ path, id, payload, status })
        res.writeHead(status).end()
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }
  /** The messages a path took (answered 2xx), each id once per acceptance. */
  accepted(path: string) {
    return this.calls.filter((c) => c.path === path && c.status === 204)
  }
  close() {
    return new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve())
  }
}

describe('outbound webhooks: signed deliveries, retries, deliveries list, limits and permissions', () => {
  let stack: FullStack
  const receiver = new Receiver()
  let engagement = ''
  const alice = () => stack.alice

  const create = (who: Client, body: unknown) => stack.call(who, 'POST', '/api/webhooks', body)
  /** A webhook of alice's at the receiver's `path`, its secret given to the receiver. */
  const hook = async (path: string, eventTypes: string[]) => {
    const res = await create(alice(), { url: `${receiver.url}${path}`, event_types: eventTypes })
    assert.equal(res.status, 201, res.text)
    receiver.secrets.set(path, res.body.secret as string)
    return res.body.id as string
  }
  const deliveries = async (id: string, who = alice()) => {
    const res = await stack.call(who, 'GET', `/api/webhooks/${id}/deliveries?limit=100`)
    assert.equal(res.status, 200, res.text)
    return res.body.deliveries as Delivery[]
  }
  const newTask = async (text: string) => {
    const res = await stack.call(alice(), 'POST', '/api/tasks', {
      engagement_id: engagement,
      text,
      async: true,
    })
    assert.equal(res.status, 200, res.text)
    return (res.body.task as { id: string }).id
  }
  const code = (res: { body: Record<string, unknown> }) => (res.body.error as { code: string }).code
  const message = (res: { body: Record<string, unknown> }) => (res.body.error as { message: string }).message

  before(async () => {
    await receiver.start()
    stack = await startFullStack({ RENTAL_WEBHOOK_RETRY_DELAYS_S: '1,1,1,1', RENTAL_MAX_WEBHOOKS: '6' })
    engagement = await stack.hireAndSign(
      alice(),
      'job_summary',
      await stack.agentOf('job_summary'),
      stack.newClientKey(),
    )
  })
  after(async () => {
    await stack.close()
    await receiver.close()
  })

  it('shows the secret once, lists webhooks without it', async () => {
    const res = await create(alice(), {
      url: 'https://127.0.0.1:9/a',
      event_types: ['task.created', 'task.created'],
      description: 'listed',
    })
    assert.equal(res.status, 201, res.text)
    const secret = res.body.secret as string
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
    assert.deepEqual(res.body.event_types, ['task.created'])
    const list = await stack.call(alice(), 'GET', '/api/webhooks')
    assert.equal(list.status, 200, list.text)
    const listed = (list.body.webhooks as Array<{ id: string; description: string }>).find(
      (w) => w.id === res.body.id,
    )
    assert.equal(listed?.description, 'listed')
    assert.ok(!list.text.includes(secret) && !list.text.includes('whsec_'), 'no secret in the list')
    assert.equal((await stack.call(alice(), 'DELETE', `/api/webhooks/${res.body.id as string}`)).status, 200)
  })

  it('delivers every event once per webhook-id, signed, through failures and retries', async () => {
    const flaky = await hook('/flaky', ['task.created', 'webhook.created', 'webhook.deleted'])
    // events after its creation: a webhook made and deleted, and two tasks
    const other = await create(alice(), { url: 'https://127.0.0.1:9/b', event_types: ['*'] })
    assert.equal(other.status, 201, other.text)
    assert.equal(
      (await stack.call(alice(), 'DELETE', `/api/webhooks/${other.body.id as string}`)).status,
      200,
    )
    const tasks = [await newTask('First text for the hook.'), await newTask('Second text for the hook.')]
    await eventually('four deliveries delivered', async () => {
      const list = await deliveries(flaky)
      return list.length === 4 && list.every((d) => d.state === 'delivered')
    })
    assert.deepEqual(receiver.unverified, [])
    const accepted = receiver.accepted('/flaky')
    assert.equal(accepted.length, 4, 'each message accepted once')
    assert.equal(new Set(accepted.map((c) => c.id)).size, 4)
    // every retry carried the same webhook-id: three calls per message, the first two refused
    for (const { id } of accepted)
      assert.deepEqual(
        receiver.calls.filter((c) => c.id === id).map((c) => c.status),
        [500, 500, 204],
      )
    const types = accepted.map((c) => c.payload.type).sort()
    assert.deepEqual(types, ['task.created', 'task.created', 'webhook.created', 'webhook.deleted'])
    assert.deepEqual(
      accepted
        .filter((c) => c.payload.type === 'task.created')
        .map((c) => c.payload.data.subjects.task_id)
        .sort(),
      [...tasks].sort(),
    )
    // its own creation came before it; the other webhook's creation and deletion after
    for (const c of accepted.filter((c) => c.payload.type.startsWith('webhook.')))
      assert.equal(c.payload.data.subjects.webhook_id, other.body.id)
    const first = accepted[0]!.payload
    assert.match(first.data.event_id, /^evt_\d+$/)
    assert.ok(!Number.isNaN(Date.parse(first.timestamp)))
    // the deliveries list: newest event first, each attempt with status, duration, error and time
    const list = await deliveries(flaky)
    const seqs = list.map((d) => Number(d.event_id.slice(4)))
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => b - a),
    )
    for (const d of list) {
      assert.equal(d.attempt_count, 3)
      assert.deepEqual(
        d.attempts.map((a) => [a.attempt, a.status, a.error]),
        [
          [1, 500, 'answered 500'],
          [2, 500, 'answered 500'],
          [3, 204, null],
        ],
      )
      assert.ok(d.attempts.every((a) => Number.isInteger(a.duration_ms) && !Number.isNaN(Date.parse(a.at))))
      assert.equal(d.next_attempt_at, null)
      assert.ok(accepted.some((c) => c.id === d.id && c.payload.data.event_id === d.event_id))
    }
    assert.equal((await stack.call(alice(), 'DELETE', `/api/webhooks/${flaky}`)).status, 200)
  })

  it('a receiver that never answers 2xx: each attempt recorded, then failed', async () => {
    const down = await hook('/down', ['webhook.test'])
    const test = await stack.call(alice(), 'POST', `/api/webhooks/${down}/test`)
    assert.equal(test.status, 200, test.text)
    await eventually('the delivery failed', async () => (await deliveries(down))[0]?.state === 'failed')
    const [d] = await deliveries(down)
    assert.equal(d!.attempt_count, 5, 'the first attempt and four retries')
    assert.deepEqual(
      d!.attempts.map((a) => a.status),
      [500, 500, 500, 500, 500],
    )
    assert.equal(d!.next_attempt_at, null)
    assert.equal(receiver.calls.filter((c) => c.id === test.body.delivery_id).length, 5)
    assert.equal((await stack.call(alice(), 'DELETE', `/api/webhooks/${down}`)).status, 200)
  })

  it('a test delivery goes to that webhook only; the engagement’s filter holds back other types', async () => {
    const quiet = await hook('/quiet', ['task.created'])
    const all = await hook('/all', ['*'])
    const test = await stack.call(alice(), 'POST', `/api/webhooks/${quiet}/test`)
    assert.equal(test.status, 200, test.text)
    assert.match(test.body.delivery_id as string, /^msg_/)
    await eventually('the test delivered', async () =>
      receiver.accepted('/quiet').some((c) => c.id === test.body.delivery_id),
    )
    const got = receiver.accepted('/quiet').find((c) => c.id === test.body.delivery_id)!
    assert.equal(got.payload.type, 'webhook.test')
    assert.equal(got.payload.data.event_id, test.body.event_id)
    // the engagement now sends only task.state_changed to webhooks: its new task is held back
    const config = await stack.call(alice(), 'POST', `/api/engagements/${engagement}/config`, {
      webhook_events: ['task.state_changed'],
    })
    assert.equal(config.status, 200, config.text)
    const held = await newTask('A task whose creation the engagement keeps from webhooks.')
    // a later event reaches /all, so the consumer has passed the test event and the task
    const marker = await create(alice(), { url: 'https://127.0.0.1:9/marker', event_types: ['task.trace'] })
    assert.equal(marker.status, 201, marker.text)
    await eventually('the marker delivered to /all', async () =>
      receiver
        .accepted('/all')
        .some(
          (c) =>
            c.payload.type === 'webhook.created' && c.payload.data.subjects.webhook_id === marker.body.id,
        ),
    )
    // neither the test event nor the audit record of each request goes to `*`
    assert.ok(!receiver.calls.some((c) => c.path === '/all' && c.payload.type === 'webhook.test'))
    assert.ok(!receiver.calls.some((c) => c.payload.type === 'request.answered'))
    // held back: the task's creation; its state changes (the type the filter keeps) may go
    assert.ok(
      !receiver.calls.some(
        (c) => c.payload.type !== 'task.state_changed' && c.payload.data.subjects.task_id === held,
      ),
    )
    assert.ok(!(await deliveries(quiet)).some((d) => d.event_type === 'task.created'))
    for (const id of [quiet, all, marker.body.id as string])
      assert.equal((await stack.call(alice(), 'DELETE', `/api/webhooks/${id}`)).status, 200)
    await stack.call(alice(), 'POST', `/api/engagements/${engagement}/config`, { webhook_events: ['*'] })
  })

  it('a deleted webhook’s pending deliveries stop, and it is 404 after', async () => {
    const gone = await hook('/down', ['webhook.test'])
    const test = await stack.call(alice(), 'POST', `/api/webhooks/${gone}/test`)
    await eventually('a first attempt', async () =>
      receiver.calls.some((c) => c.id === test.body.delivery_id),
    )
    // two deletes at once: one deletes it, the other finds nothing
    const both = await Promise.all([1, 2].map(() => stack.call(alice(), 'DELETE', `/api/webhooks/${gone}`)))
    const del = both.find((r) => r.status === 200)!
    assert.deepEqual([del.body, both.map((r) => r.status).sort()], [{ id: gone, deleted: true }, [200, 404]])
    const calls = receiver.calls.filter((c) => c.id === test.body.delivery_id).length
    await new Promise((resolve) => setTimeout(resolve, 2500))
    // at most the attempt already under way when it was deleted
    assert.ok(receiver.calls.filter((c) => c.id === test.body.delivery_id).length <= calls + 1)
    for (const [method, path] of [
      ['DELETE', ''],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      const res = await stack.call(alice(), method, `/api/webhooks/${gone}${path}`)
      assert.deepEqual([res.status, code(res)], [404, 'webhook_not_found'], `${method} ${path}`)
    }
  })

  it('another organization’s webhook is 404 on every route', async () => {
    const mine = await hook('/private', ['task.created'])
    for (const [method, path] of [
      ['DELETE', ''],
      ['POST', '/test'],
      ['GET', '/deliveries'],
    ] as const) {
      const res = await stack.call(stack.bob, method, `/api/webhooks/${mine}${path}`)
      assert.deepEqual([res.status, code(res)], [404, 'webhook_not_found'], `${method} ${path}`)
    }
    const bobs = await stack.call(stack.bob, 'GET', '/api/webhooks')
    assert.deepEqual(bobs.body.webhooks, [])
    assert.equal((await stack.call(alice(), 'DELETE', `/api/webhooks/${mine}`)).status, 200)
  })

  it('refuses bad input with 400 naming the field or type', async () => {
    const url = 'https://127.0.0.1:9/x'
    const cases: Array<[unknown, string, RegExp]> = [
      [{ url, event_types: ['task.created', 'task.exploded'] }, 'unknown_event_type', /task\.exploded/],
      [{ url, event_types: ['Task Created'] }, 'invalid_request', /event_types/],
      [{ url, event_types: [] }, 'invalid_request', /event_types/],
      [{ url }, 'invalid_request', /event_types/],
      [{ url, event_types: ['*'], extra: 1 }, 'invalid_request', /extra|additional/],
      [{ url: `https://x.test/${'a'.repeat(2048)}`, event_types: ['*'] }, 'invalid_request', /url/],
      [{ url: 'ftp://hooks.example.test/x', event_types: ['*'] }, 'invalid_webhook_url', /url must be https/],
      [{ url: 'not a url', event_types: ['*'] }, 'invalid_webhook_url', /url is not an absolute URL/],
      [{ url: 'https://u:p@hooks.example.test/', event_types: ['*'] }, 'invalid_webhook_url', /credentials/],
      [{ url, event_types: ['*'], description: 'd'.repeat(501) }, 'invalid_request', /description/],
      [{ url, event_types: ['*'], description: 'a\u0000b' }, 'invalid_request', /description/],
    ]
    for (const [body, expected, named] of cases) {
      const res = await create(alice(), body)
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`)
      assert.equal(code(res), expected, res.text)
      assert.match(message(res), named)
    }
    const page = await stack.call(alice(), 'GET', '/api/webhooks?limit=0')
    assert.equal(page.status, 400)
  })

  it('holds an organization to its limit of live webhooks (409)', async () => {
    const made: string[] = []
    // four at once onto four live: the organization's creations are serialised, two fit
    for (let i = 0; i < 4; i++)
      made.push(
        (await create(alice(), { url: 'https://127.0.0.1:9/n', event_types: ['*'] })).body.id as string,
      )
    const racing = await Promise.all(
      [1, 2, 3, 4].map(() => create(alice(), { url: 'https://127.0.0.1:9/n', event_types: ['*'] })),
    )
    assert.deepEqual(racing.map((r) => r.status).sort(), [201, 201, 409, 409])
    made.push(...racing.filter((r) => r.status === 201).map((r) => r.body.id as string))
    for (;;) {
      const res = await create(alice(), { url: 'https://127.0.0.1:9/n', event_types: ['*'] })
      if (res.status !== 201) {
        assert.deepEqual([res.status, code(res)], [409, 'webhook_limit'], res.text)
        break
      }
      made.push(res.body.id as string)
      assert.ok(made.length <= 6, 'the limit holds')
    }
    const listed = await stack.call(alice(), 'GET', '/api/webhooks')
    assert.equal((listed.body.webhooks as unknown[]).length, 6)
    for (const id of made) await stack.call(alice(), 'DELETE', `/api/webhooks/${id}`)
  })

  it('webhooks:write for owners and admins; webhooks:read also for members and viewers; billing neither', async () => {
    const mine = await hook('/roles', ['task.created'])
    const people: Record<string, Client> = {}
    for (const role of ['admin', 'member', 'viewer', 'billing']) {
      const email = `${role}-hooks@example.test`
      const invited = await stack.call(alice(), 'POST', '/api/org/members', { email, role })
      assert.equal(invited.status, 201, invited.text)
      people[role] = await stack.signInWith(email)
    }
    const url = 'https://127.0.0.1:9/r'
    const made = await create(people.admin!, { url, event_types: ['*'] })
    assert.equal(made.status, 201, made.text)
    for (const role of ['member', 'viewer']) {
      const who = people[role]!
      assert.equal((await stack.call(who, 'GET', '/api/webhooks')).status, 200, role)
      assert.equal((await stack.call(who, 'GET', `/api/webhooks/${mine}/deliveries`)).status, 200, role)
      for (const res of [
        await create(who, { url, event_types: ['*'] }),
        await stack.call(who, 'POST', `/api/webhooks/${mine}/test`),
        await stack.call(who, 'DELETE', `/api/webhooks/${mine}`),
      ]) {
        assert.deepEqual([res.status, code(res)], [403, 'forbidden'], `${role}: ${res.text}`)
        assert.match(message(res), /webhooks:write/)
      }
    }
    const billing = await stack.call(people.billing!, 'GET', '/api/webhooks')
    assert.deepEqual([billing.status, code(billing)], [403, 'forbidden'])
    assert.match(message(billing), /webhooks:read/)
    // without the CSRF header, a write is refused before anything else
    const noCsrf = await stack.call(alice(), 'DELETE', `/api/webhooks/${mine}`, undefined, { csrf: false })
    assert.equal(noCsrf.status, 403)
    assert.equal(code(noCsrf), 'csrf_failed')
    assert.equal(
      (await stack.call(people.admin!, 'DELETE', `/api/webhooks/${made.body.id as string}`)).status,
      200,
    )
    assert.equal((await stack.call(people.admin!, 'DELETE', `/api/webhooks/${mine}`)).status, 200)
  })

  it('signs as the Standard Webhooks test vector says', () => {
    // the vector of the specification's reference libraries
    assert.equal(
      signature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    )
  })

  it('private addresses are allowed only in development and tests, never in production', () => {
    const common = (nodeEnv: string) => ({ nodeEnv, dataDir: undefined }) as never
    const env = {
      RENTAL_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64url'),
      RENTAL_IDP_ADMIN_TOKEN: 'a'.repeat(32),
      RENTAL_LEDGER_TOKEN: 'b'.repeat(32),
    }
    assert.equal(readRentalConfig(env, common('test')).webhooks.allowPrivate, true)
    assert.equal(readRentalConfig(env, common('development')).webhooks.allowPrivate, true)
    assert.equal(readRentalConfig(env, common('production')).webhooks.allowPrivate, false)
    assert.deepEqual(
      readRentalConfig(env, common('production')).webhooks.retryDelaysS,
      [5, 300, 1800, 7200, 18000, 36000],
    )
    assert.throws(
      () => readRentalConfig({ ...env, RENTAL_WEBHOOKS_ALLOW_PRIVATE: 'true' }, common('production')),
      /RENTAL_WEBHOOKS_ALLOW_PRIVATE/,
    )
  })
})
