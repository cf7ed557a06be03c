import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { generateMlDsa65, ML_DSA_65, signMlDsa65, verifyMlDsa65 } from './mldsa.ts'

const testdata = new URL('../testdata/ml-dsa/', import.meta.url)
const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(name, testdata), 'utf8')) as T
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))

const keyGen = load<{ tcId: number; seed: string; pk: string; sk: string }>('acvp-keygen-65.json')
const wycheproof = load<{
  publicKey: string
  tests: { tcId: number; comment: string; msg: string; ctx?: string; sig: string; result: string }[]
}>('wycheproof-verify-65.json')

const [baseline, withContext] = wycheproof.tests
const publicKey = hex(wycheproof.publicKey)
const message = new TextEncoder().encode('Hello world')

describe('ML-DSA-65', () => {
  it(`derives the ACVP keyGen tcId ${keyGen.tcId} key pair from its seed`, () => {
    const pair = generateMlDsa65(hex(keyGen.seed))
    assert.deepEqual(pair.publicKey, hex(keyGen.pk))
    assert.deepEqual(pair.secretKey, hex(keyGen.sk))
  })

  for (const t of wycheproof.tests) {
    it(`verifies Wycheproof tcId ${t.tcId} (${t.comment})`, () => {
      const context = t.ctx === undefined ? undefined : hex(t.ctx)
      assert.equal(verifyMlDsa65(publicKey, hex(t.msg), hex(t.sig), context), t.result === 'valid')
    })
  }

  it('binds the signature to its context', () => {
    assert.equal(
      verifyMlDsa65(publicKey, message, hex(baseline!.sig), new TextEncoder().encode('Context')),
      false,
    )
    assert.equal(verifyMlDsa65(publicKey, message, hex(withContext!.sig)), false)
    assert.equal(verifyMlDsa65(publicKey, message, hex(baseline!.sig), new Uint8Array()), true)
  })

  it('rejects a signature for another message, under another key, or with a flipped bit', () => {
    const sig = hex(baseline!.sig)
    assert.equal(verifyMlDsa65(publicKey, new TextEncoder().encode('Hello world!'), sig), false)
    assert.equal(verifyMlDsa65(hex(keyGen.pk), message, sig), false)
    for (const index of [0, 100, 3000, ML_DSA_65.signature - 1]) {
      const flipped = new Uint8Array(sig)
      flipped[index]! ^= 1
      assert.equal(verifyMlDsa65(publicKey, message, flipped), false, `bit flipped at byte ${index}`)
    }
  })

  it('answers false, without throwing, for wrong lengths and an over-long context', () => {
    const sig = hex(baseline!.sig)
    assert.equal(verifyMlDsa65(publicKey.slice(1), message, sig), false)
    assert.equal(verifyMlDsa65(publicKey, message, sig.slice(1)), false)
    assert.equal(verifyMlDsa65(publicKey, message, new Uint8Array([...sig, 0])), false)
    assert.equal(verifyMlDsa65(publicKey, message, sig, new Uint8Array(256)), false)
    assert.equal(verifyMlDsa65(new Uint8Array(ML_DSA_65.publicKey), message, sig), false)
  })

  it('signs with fresh randomness and verifies, with and without a context', () => {
    const pair = generateMlDsa65()
    assert.equal(pair.publicKey.length, ML_DSA_65.publicKey)
    assert.equal(pair.secretKey.length, ML_DSA_65.secretKey)
    const context = new TextEncoder().encode('receipt/v1')
    const a = signMlDsa65(pair.secretKey, message, context)
    const b = signMlDsa65(pair.secretKey, message, context)
    assert.equal(a.length, ML_DSA_65.signature)
    assert.notDeepEqual(a, b)
    assert.equal(verifyMlDsa65(pair.publicKey, message, a, context), true)
    assert.equal(verifyMlDsa65(pair.publicKey, message, b, context), true)
    assert.equal(verifyMlDsa65(pair.publicKey, message, a), false)
    assert.equal(verifyMlDsa65(pair.publicKey, message, signMlDsa65(pair.secretKey, message)), true)
  })

  it('refuses a seed, secret key or context of the wrong size', () => {
    assert.throws(() => generateMlDsa65(new Uint8Array(31)), /32 bytes/)
    assert.throws(() => generateMlDsa65(new Uint8Array(64)), /32 bytes/)
    assert.throws(() => signMlDsa65(new Uint8Array(100), message), /4032 bytes/)
    assert.throws(() => signMlDsa65(hex(keyGen.sk), message, new Uint8Array(256)), /255 bytes/)
  })
})
