import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { ed25519FromSeed, generateEd25519, signEd25519, verifyEd25519 } from './ed25519.ts'

const testdata = new URL('../testdata/ed25519/', import.meta.url)
const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(name, testdata), 'utf8')) as T
const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))
const toHex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')

interface RfcVector {
  name: string
  secretKey: string
  publicKey: string
  message: string
  signature: string
}
interface WycheproofTest {
  tcId: number
  comment: string
  msg: string
  sig: string
  result: 'valid' | 'invalid'
}

const rfc = load<{ vectors: RfcVector[] }>('rfc8032-7.1.json').vectors
const wycheproof = load<{ publicKey: string; tests: WycheproofTest[] }>('wycheproof-strictness.json')

// The order of the Ed25519 group, L = 2^252 + 27742317777372353535851937790883648493 (RFC 8032 §5.1).
const L = 2n ** 252n + 27742317777372353535851937790883648493n

function withS(signature: Uint8Array, s: bigint): Uint8Array {
  const out = new Uint8Array(signature)
  for (let i = 0; i < 32; i++) out[32 + i] = Number((s >> BigInt(8 * i)) & 0xffn)
  return out
}
const sOf = (signature: Uint8Array) => BigInt(`0x${toHex(signature.slice(32).reverse())}`)

describe('Ed25519', () => {
  describe('RFC 8032 §7.1 test vectors', () => {
    for (const v of rfc) {
      it(`${v.name}: derives the public key, reproduces the signature and verifies it`, () => {
        const pair = ed25519FromSeed(hex(v.secretKey))
        assert.equal(toHex(pair.publicKey), v.publicKey)
        assert.equal(toHex(pair.seed), v.secretKey)
        assert.equal(toHex(signEd25519(hex(v.secretKey), hex(v.message))), v.signature)
        assert.equal(verifyEd25519(hex(v.publicKey), hex(v.message), hex(v.signature)), true)
      })
    }
  })

  describe('Wycheproof strictness vectors', () => {
    for (const t of wycheproof.tests) {
      it(`tcId ${t.tcId} (${t.comment}) is ${t.result}`, () => {
        const ok = verifyEd25519(hex(wycheproof.publicKey), hex(t.msg), hex(t.sig))
        assert.equal(ok, t.result === 'valid')
      })
    }
  })

  it('rejects a signature whose S is not canonical (S + L)', () => {
    for (const v of rfc) {
      const sig = hex(v.signature)
      const s = sOf(sig)
      assert.ok(s < L)
      assert.equal(verifyEd25519(hex(v.publicKey), hex(v.message), withS(sig, s + L)), false, v.name)
    }
  })

  it('rejects a signature made for another message', () => {
    const [a, b] = rfc
    assert.equal(verifyEd25519(hex(a!.publicKey), hex(b!.message), hex(a!.signature)), false)
    assert.equal(verifyEd25519(hex(a!.publicKey), new Uint8Array([0]), hex(a!.signature)), false)
  })

  it('rejects a signature under another key', () => {
    const [a, b] = rfc
    assert.equal(verifyEd25519(hex(b!.publicKey), hex(a!.message), hex(a!.signature)), false)
  })

  it('answers false, without throwing, for keys and signatures of the wrong length or form', () => {
    const v = rfc[2]!
    const key = hex(v.publicKey)
    const sig = hex(v.signature)
    const msg = hex(v.message)
    assert.equal(verifyEd25519(key.slice(0, 31), msg, sig), false)
    assert.equal(verifyEd25519(new Uint8Array([...key, 0]), msg, sig), false)
    assert.equal(verifyEd25519(key, msg, sig.slice(0, 63)), false)
    assert.equal(verifyEd25519(key, msg, new Uint8Array([...sig, 0])), false)
    assert.equal(verifyEd25519(new Uint8Array(32).fill(0xff), msg, sig), false)
  })

  it('refuses a seed that is not 32 bytes', () => {
    assert.throws(() => ed25519FromSeed(new Uint8Array(31)), /32 bytes/)
    for (const size of [31, 33, 64])
      assert.throws(() => signEd25519(new Uint8Array(size), new Uint8Array()), /32 bytes/)
  })

  it('generates fresh key pairs that sign and verify', () => {
    const a = generateEd25519()
    const b = generateEd25519()
    assert.notEqual(toHex(a.seed), toHex(b.seed))
    assert.deepEqual(ed25519FromSeed(a.seed), a)
    const msg = new TextEncoder().encode('hello')
    assert.equal(verifyEd25519(a.publicKey, msg, signEd25519(a.seed, msg)), true)
  })
})
