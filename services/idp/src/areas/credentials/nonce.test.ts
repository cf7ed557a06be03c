import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MemoryKv } from '@svc/kit'
import { C_NONCE_TTL_S, issueNonce, spendNonce } from './nonce.ts'

describe('c_nonce values (OpenID4VCI §7)', () => {
  it('are spent once, by one of several concurrent requests', async () => {
    const kv = new MemoryKv()
    const nonce = await issueNonce(kv)
    const spent = await Promise.all(Array.from({ length: 5 }, () => spendNonce(kv, nonce)))
    assert.equal(spent.filter(Boolean).length, 1)
    assert.equal(await spendNonce(kv, nonce), false)
    await kv.close()
  })

  it('go stale after five minutes, and a nonce never issued is never good', async () => {
    let now = Date.now()
    const kv = new MemoryKv(() => now)
    const nonce = await issueNonce(kv)
    now += C_NONCE_TTL_S * 1000 + 1
    assert.equal(await spendNonce(kv, nonce), false)
    assert.equal(await spendNonce(kv, 'made-up'), false)
    await kv.close()
  })
})
