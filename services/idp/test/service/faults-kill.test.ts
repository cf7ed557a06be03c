import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { openDatabase, type RunningService, startService } from '@svc/kit'
import { bundledMain } from '@svc/testing/bundled-main'
import { onPostgres, request, restartablePort, testEnv } from '@svc/kit/testing'
import { FaultProxy } from '../../../../packages/kit/test/fault-proxy.ts'
import { ledger } from '../../../ledger/src/app.ts'
import type { LedgerConfig } from '../../../ledger/src/config.ts'
import { ADMIN } from '@svc/testing/idp-flow'
import { type LedgerReceipt } from '@svc/testing/ledger'

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url))
const WRITER = 'test-idp-writer-token-kill1'

/** The idp as its own process, on storage that outlives it: a PostgreSQL schema or a PGlite folder. */
async function launch(port: number, ledgerUrl: string, storage: Record<string, string>) {
  const child = spawn(process.execPath, ['--enable-source-maps', await bundledMain(main)], {
    env: {
      ...process.env,
      ...storage,
      IDP_PORT: String(port),
      IDP_URL: `http://127.0.0.1:${port}`,
      LEDGER_URL: ledgerUrl,
      IDP_LEDGER_TOKEN: WRITER,
      IDP_ADMIN_TOKEN: ADMIN,
      IDP_REGISTER_RATE_PER_MIN: '0',
      LOG_LEVEL: 'error',
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return { child, exited, url: `http://127.0.0.1:${port}` }
}

async function ready(url: string) {
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`${url}/readyz`).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the idp did not become ready')
}

// on PGlite the two cold starts of the idp take over a minute: the fault is the same, so PostgreSQL only
describe(
  'receipts after a kill -9 of the idp',
  {
    skip: !onPostgres && 'needs DATABASE_URL: two embedded-database starts take too long for a fault test',
  },
  () => {
    const schema = `t${randomBytes(5).toString('hex')}_kill`
    const storage: Record<string, string> = { DATABASE_SCHEMA: schema }
    const children: ChildProcess[] = []
    let log: RunningService<LedgerConfig>
    let proxy: FaultProxy
    before(async () => {
      log = await startService(
        ledger,
        testEnv({ LEDGER_WRITERS: `idp:${WRITER}`, LEDGER_BATCH_WAIT_MS: '2' }),
        {
          fresh: true,
        },
      )
      proxy = await FaultProxy.start({ host: '127.0.0.1', port: Number(new URL(log.url).port) })
    })
    after(async () => {
      for (const c of children) c.kill('SIGKILL')
      await proxy?.close()
      await log?.close()
      if (onPostgres)
        await (await openDatabase({ url: process.env.DATABASE_URL, schema, dropSchemaOnClose: true })).close()
    })

    it('delivers the receipts the killed process had taken within seconds of the restart, each once', async () => {
      const port = await restartablePort()
      const ledgerUrl = `http://127.0.0.1:${proxy.port}`
      const first = await launch(port, ledgerUrl, storage)
      children.push(first.child)
      await ready(first.url)
      const signup = await request(`${first.url}/orgs/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'Killers',
          contact_email: 'ops@killers.example.com',
          accept_terms: true,
        }),
      })
      assert.equal(signup.status, 201)
      const key = signup.body.api_key as string

      // the ledger goes silent: each screening is receipted, and its delivery job is taken and hangs
      proxy.set('blackhole')
      const subjects = Array.from(
        { length: 8 },
        (_, i) => `did:example:killed${i}${randomBytes(3).toString('hex')}`,
      )
      const screened = await Promise.all(
        subjects.map((did) =>
          request(`${first.url}/orgs/agents/screen`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
            body: JSON.stringify({ did }),
          }),
        ),
      )
      for (const res of screened) assert.equal(res.status, 200)
      await new Promise((r) => setTimeout(r, 1_000)) // the worker polls every 0.5 s: the jobs are taken
      first.child.kill('SIGKILL')
      await first.exited

      proxy.set('pass')
      const second = await launch(port, ledgerUrl, storage)
      children.push(second.child)
      await ready(second.url)
      const restarted = Date.now()

      for (const [i, did] of subjects.entries()) {
        let found: LedgerReceipt[] = []
        while (Date.now() - restarted < 8_000) {
          const res = await request(`${log.url}/v1/receipts?${new URLSearchParams({ subject: did })}`, {
            headers: { authorization: `Bearer ${WRITER}` },
          })
          found = res.body.receipts as LedgerReceipt[]
          if (found.length) break
          await new Promise((r) => setTimeout(r, 200))
        }
        assert.equal(
          found.length,
          1,
          `the receipt about ${did} is on the ledger once, within 8 s of the restart`,
        )
        assert.equal(found[0]!.leaf_hash, screened[i]!.body.receipt, 'it is the receipt the idp answered')
      }
      second.child.kill('SIGTERM')
      await second.exited
    })
  },
)
