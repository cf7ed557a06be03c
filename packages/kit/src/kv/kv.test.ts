import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, describe, it } from 'node:test'
import { type Kv, MemoryKv, RedisKv } from './index.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const stores: Array<[string, () => Kv, string | false]> = [
  ['memory', () => new MemoryKv(), false],
  [
    'redis',
    () => new RedisKv(process.env.REDIS_URL!, `t${randomBytes(5).toString('hex')}`),
    !process.env.REDIS_URL && 'needs REDIS_URL',
  ],
]

for (const [name, make, skip] of stores) {
  describe(`kv on ${name}`, { skip }, () => {
    const kv = skip ? undefined : make()
    after(async () => kv?.close())

    it('gets what was set, and nothing once the TTL passes or the key is deleted', async () => {
      await kv!.set('k', 'v', 100)
      assert.equal(await kv!.get('k'), 'v')
      await sleep(200)
      assert.equal(await kv!.get('k'), null)
      await kv!.set('kept', 'v')
      await kv!.delete('kept')
      assert.equal(await kv!.get('kept'), null)
    })

    it('sets if absent exactly once among concurrent callers (a replay check)', async () => {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => kv!.setIfAbsent('jti', String(i), 1000)),
      )
      assert.equal(results.filter(Boolean).length, 1)
      assert.equal(await kv!.setIfAbsent('jti', 'again', 1000), false)
    })

    it('increments within a fixed window, then starts again', async () => {
      const counts = await Promise.all(Array.from({ length: 5 }, () => kv!.increment('rate', 150)))
      assert.deepEqual(
        counts.sort((a, b) => a - b),
        [1, 2, 3, 4, 5],
      )
      await sleep(250)
      assert.equal(await kv!.increment('rate', 150), 1)
    })

    it('answers ping', async () => {
      assert.equal(await kv!.ping(), true)
    })
  })
}

describe('kv on an unreachable redis', () => {
  it('reports ping false instead of throwing', async () => {
    const kv = new RedisKv('redis://127.0.0.1:1', 'dead')
    assert.equal(await kv.ping(), false)
    await kv.close()
  })
})
