import assert from 'node:assert/strict'
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '@svc/kit'
import { bundledMain } from '@svc/testing/bundled-main'
import { onPostgres, request, restartablePort, tempFolder } from '@svc/kit/testing'
import { append, newIssuer, signedReceipt, writerEnv } from '../support/helpers.ts'

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

/** The ledger as its own process, on data that outlives it: a PGlite directory or a PostgreSQL schema. */
async function launch(port: number, storage: Record<string, string>) {
  const child = spawn(process.execPath, ['--enable-source-maps', await bundledMain(main)], {
    env: {
      ...process.env,
      ...writerEnv,
      ...storage,
      LEDGER_PORT: String(port),
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
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the ledger did not become ready')
}

/** Runs `check` on every item, eight at a time; the first failure is thrown once all have settled. */
async function eightAtATime<T>(items: T[], check: (item: T) => Promise<void>) {
  let next = 0
  const worker = async () => {
    while (next < items.length) await check(items[next++]!)
  }
  const settled = await Promise.allSettled(Array.from({ length: 8 }, worker))
  for (const s of settled) if (s.status === 'rejected') throw s.reason
}

describe('ledger crash', () => {
  const schema = `t${randomBytes(5).toString('hex')}_crash`
  const storage: Record<string, string> = onPostgres
    ? { DATABASE_SCHEMA: schema }
    : { DATA_DIR: join(tempFolder(), 'data'), DATABASE_URL: '', REDIS_URL: '' }
  const children: ChildProcess[] = []
  after(async () => {
    for (const c of children) c.kill('SIGKILL')
    if (onPostgres)
      await (await openDatabase({ url: process.env.DATABASE_URL, schema, dropSchemaOnClose: true })).close()
  })

  it('loses no acknowledged receipt and duplicates none when killed during a burst of appends', async (t) => {
    const port = await restartablePort()
    const first = await launch(port, storage)
    children.push(first.child)
    await ready(first.url)

    const issuer = newIssuer()
    const sent = Array.from({ length: 3000 }, (_, i) => signedReceipt(issuer, `tsk_crash_${i}`, { i }))
    const acked = new Map<number, { index: number; leaf_hash: string }>()
    let next = 0
    let killed = false
    const writer = async () => {
      while (next < sent.length && !killed) {
        const i = next++
        try {
          const res = await append(first.url, sent[i])
          if (res.status === 201 || res.status === 200)
            acked.set(i, (await res.json()) as { index: number; leaf_hash: string })
        } catch {}
      }
    }
    const burst = Promise.all(Array.from({ length: 20 }, writer))
    while (acked.size < 400) await new Promise((r) => setTimeout(r, 10))
    first.child.kill('SIGKILL')
    killed = true
    await burst
    await first.exited
    t.diagnostic(`${acked.size} receipts acknowledged before the kill, ${next} sent`)

    const second = await launch(port, storage)
    children.push(second.child)
    await ready(second.url)

    // each check on its own, eight at a time
    await eightAtATime([...acked], async ([i, ack]) => {
      const entry = await request(`${second.url}/v1/entries/${ack.index}`)
      assert.equal(entry.status, 200, `acknowledged receipt ${i} at index ${ack.index} survived`)
      assert.equal(entry.body.leaf_hash, ack.leaf_hash)
    })
    // every receipt sent, acknowledged or not, is now in the log exactly once
    const indices = new Map<number, number>()
    await eightAtATime(
      Array.from({ length: next }, (_, i) => i),
      async (i) => {
        const res = await append(second.url, sent[i])
        const body = (await res.json()) as { index: number; duplicate: boolean }
        if (acked.has(i)) {
          assert.equal(body.duplicate, true, `receipt ${i} was already logged`)
          assert.equal(body.index, acked.get(i)!.index)
        }
        assert.equal(indices.has(body.index), false, `index ${body.index} holds one receipt`)
        indices.set(body.index, i)
      },
    )
    const size = Math.max(...indices.keys()) + 1
    assert.equal(size, indices.size, 'no gaps and no duplicates: the tree holds each sent receipt once')
    second.child.kill('SIGTERM')
    await second.exited
  })
})
