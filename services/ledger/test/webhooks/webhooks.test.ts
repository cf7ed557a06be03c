import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'
import { append, newIssuer, signedReceipt, WRITER } from '../support/helpers.ts'

const OTHER = 'other-writer-token-00000001'

/** A subscriber's endpoint: records every delivery, and can fail the first few. */
function receiver(failFirst = 0) {
  const received: Array<{ signature: string; body: string }> = []
  let failures = failFirst
  const server: Server = createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => {
      body += chunk
    })
    req.on('end', () => {
      if (failures > 0) {
        failures--
        res.writeHead(503).end()
        return
      }
      received.push({ signature: String(req.headers['x-svc-signature']), body })
      res.writeHead(200).end()
    })
  })
  return {
    received,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    start: () => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve)),
    stop: () => new Promise((resolve) => server.close(resolve)),
  }
}

async function until(check: () => boolean, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 100))
  }
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const json = (token: string) => ({ ...auth(token), 'content-type': 'application/json' })

describe('ledger webhooks', () => {
  let service: RunningService<LedgerConfig>
  const issuer = newIssuer()
  before(async () => {
    service = await startService(ledger, testEnv({ LEDGER_WRITERS: `rental:${WRITER},idp:${OTHER}` }), {
      fresh: true,
    })
  })
  after(async () => service.close())

  const subscribe = (url: string, token = WRITER) =>
    request(`${service.url}/v1/webhooks`, {
      method: 'POST',
      headers: json(token),
      body: JSON.stringify({ url, events: ['receipt.recorded'] }),
    })

  it('delivers receipt.recorded for every new receipt, signed with the secret shown once', async () => {
    const hook = receiver()
    await hook.start()
    const created = await subscribe(hook.url())
    assert.equal(created.status, 201)
    const secret = created.body.secret as string
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/)
    const signed = [0, 1, 2].map((i) => signedReceipt(issuer, `tsk_hook_${i}`))
    for (const s of signed) assert.equal((await append(service.url, s)).status, 201)
    await until(() => hook.received.length >= 3)
    for (const delivery of hook.received) {
      const expected = `sha256=${createHmac('sha256', secret).update(delivery.body).digest('hex')}`
      assert.equal(delivery.signature, expected)
      const event = JSON.parse(delivery.body) as {
        type: string
        id: string
        data: { receipt: { subject: string } }
      }
      assert.equal(event.type, 'receipt.recorded')
      assert.match(event.id, /^evt_/)
    }
    assert.deepEqual(
      hook.received
        .map((d) => (JSON.parse(d.body) as { data: { receipt: { subject: string } } }).data.receipt.subject)
        .sort(),
      ['tsk_hook_0', 'tsk_hook_1', 'tsk_hook_2'],
    )
    const listed = await request(`${service.url}/v1/webhooks`, { headers: auth(WRITER) })
    assert.deepEqual(
      (listed.body.webhooks as Array<{ id: string; secret?: string }>).map((w) => [w.id, w.secret]),
      [[created.body.id, undefined]],
    )

    assert.equal(
      (
        await request(`${service.url}/v1/webhooks/${created.body.id}`, {
          method: 'DELETE',
          headers: auth(OTHER),
        })
      ).status,
      404,
      'another subscriber cannot delete it',
    )
    assert.equal(
      (
        await request(`${service.url}/v1/webhooks/${created.body.id}`, {
          method: 'DELETE',
          headers: auth(WRITER),
        })
      ).status,
      200,
    )
    await append(service.url, signedReceipt(issuer, 'tsk_after_delete'))
    await new Promise((r) => setTimeout(r, 1500))
    assert.equal(hook.received.length, 3, 'no delivery after the webhook is deleted')
    await hook.stop()
  })

  it('retries a failing endpoint until it accepts', async () => {
    const hook = receiver(1)
    await hook.start()
    const created = await subscribe(hook.url(), OTHER)
    await append(service.url, signedReceipt(issuer, 'tsk_retry'))
    await until(() => hook.received.length >= 1)
    assert.equal(
      (JSON.parse(hook.received[0]!.body) as { data: { receipt: { subject: string } } }).data.receipt.subject,
      'tsk_retry',
    )
    await request(`${service.url}/v1/webhooks/${created.body.id}`, { method: 'DELETE', headers: auth(OTHER) })
    await hook.stop()
  })

  it('refuses bad subscriptions', async () => {
    assert.equal((await subscribe('ftp://example.com')).status, 400)
    const unknownEvent = await request(`${service.url}/v1/webhooks`, {
      method: 'POST',
      headers: json(WRITER),
      body: JSON.stringify({ url: 'http://127.0.0.1:1/x', events: ['receipt.deleted'] }),
    })
    assert.equal(unknownEvent.status, 400)
    assert.equal((await request(`${service.url}/v1/webhooks`)).status, 401)
  })

  it('refuses a cloud metadata address even where private addresses are allowed (the kit guard)', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'https://[::ffff:a9fe:a9fe]/latest',
      'https://[fd00:ec2::254]/latest',
      'http://100.100.100.200/latest',
    ]) {
      const res = await subscribe(url)
      assert.equal(res.status, 400, url)
      assert.equal((res.body.error as { code: string }).code, 'invalid_request')
      assert.match((res.body.error as { message: string }).message, /^body\.url .*cloud metadata/)
    }
  })
})
