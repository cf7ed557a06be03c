import assert from 'node:assert/strict'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { onPostgres, request, testEnv } from '@svc/kit/testing'
import { sql } from 'kysely'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'

/** A TCP hop in front of PostgreSQL that the test can cut, black-hole and restore. */
class Hop {
  server: Server | undefined
  readonly sockets = new Set<Socket>()
  mode: 'forward' | 'blackhole' = 'forward'
  constructor(
    readonly target: URL,
    public port = 0,
  ) {}

  async open() {
    this.server = createServer((client) => {
      this.sockets.add(client)
      client.on('close', () => this.sockets.delete(client))
      client.on('error', () => {})
      if (this.mode === 'blackhole') return
      const upstream = connect(Number(this.target.port || 5432), this.target.hostname)
      this.sockets.add(upstream)
      upstream.on('close', () => this.sockets.delete(upstream))
      upstream.on('error', () => client.destroy())
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve))
    this.port = (this.server.address() as { port: number }).port
  }

  async cut() {
    for (const s of this.sockets) s.destroy()
    await new Promise((resolve) => this.server!.close(resolve))
  }
}

async function untilStatus(url: string, status: number) {
  const start = Date.now()
  for (;;) {
    const res = await request(url)
    if (res.status === status) return { res, ms: Date.now() - start }
    if (Date.now() - start > 15_000) throw new Error(`${url} stayed ${res.status}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('readiness when PostgreSQL goes away', { skip: !onPostgres && 'needs DATABASE_URL' }, () => {
  let hop: Hop
  let service: RunningService<LedgerConfig>
  before(async () => {
    const url = new URL(process.env.DATABASE_URL!)
    hop = new Hop(url)
    await hop.open()
    const viaHop = new URL(url)
    viaHop.hostname = '127.0.0.1'
    viaHop.port = String(hop.port)
    service = await startService(ledger, testEnv({ DATABASE_URL: viaHop.toString() }), { fresh: true })
  })
  after(async () => {
    if (hop.mode === 'blackhole' || !hop.server?.listening) {
      hop.mode = 'forward'
      if (!hop.server?.listening) await hop.open()
    }
    await service.close()
    await hop.cut()
  })

  it('answers 503 on /readyz while the database is unreachable, 200 on /healthz, and recovers', async (t) => {
    assert.equal((await request(`${service.url}/readyz`)).status, 200)

    await hop.cut()
    const down = await untilStatus(`${service.url}/readyz`, 503)
    t.diagnostic(`readyz answered 503 ${down.ms} ms after the connection was cut`)
    assert.deepEqual(down.res.body, {
      status: 'not_ready',
      checks: { db: 'down', redis: process.env.REDIS_URL ? 'ok' : 'not_configured' },
    })
    assert.equal((await request(`${service.url}/healthz`)).status, 200)

    await hop.open()
    const up = await untilStatus(`${service.url}/readyz`, 200)
    t.diagnostic(`readyz answered 200 again ${up.ms} ms after the database returned`)
  })

  it('survives losing the connection in the middle of a query, and serves again after', async () => {
    const running = sql`select pg_sleep(2)`.execute(service.ctx.database!.db)
    await new Promise((r) => setTimeout(r, 200))
    await hop.cut()
    await assert.rejects(running, /Connection terminated/)
    await hop.open()
    await untilStatus(`${service.url}/readyz`, 200)
  })

  it('answers 503 when the database accepts connections but never replies', async (t) => {
    await hop.cut()
    hop.mode = 'blackhole'
    await hop.open()
    // the first probe may meet a pooled connection the cut already killed; the next ones wait on the silent server
    for (let probe = 0; probe < 3; probe++) {
      const started = Date.now()
      const res = await request(`${service.url}/readyz`)
      t.diagnostic(`probe ${probe}: readyz answered ${res.status} after ${Date.now() - started} ms`)
      assert.equal(res.status, 503)
      assert.equal((res.body.checks as { db: string }).db, 'down')
    }
    await hop.cut()
    hop.mode = 'forward'
    await hop.open()
    await untilStatus(`${service.url}/readyz`, 200)
  })
})
