import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { base58 } from '@scure/base'
import { didKeyFromEd25519, didKeyVerificationMethod, ed25519FromDidKey } from './did-key.ts'
import { ed25519FromSeed } from './ed25519.ts'

interface Vector {
  did: string
  seed: string
  publicKeyBase58: string
  verificationMethod: string
  keyAgreementId: string
}
const data = JSON.parse(
  readFileSync(new URL('../testdata/did-key/ed25519-x25519.json', import.meta.url), 'utf8'),
) as { vectors: Vector[]; otherKeyTypes: Record<string, string> }

const hex = (text: string) => new Uint8Array(Buffer.from(text, 'hex'))

describe('did:key (Ed25519)', () => {
  describe('did:key method test vectors', () => {
    for (const v of data.vectors) {
      it(`${v.did.slice(0, 20)}…: encodes and decodes the published key`, () => {
        const publicKey = base58.decode(v.publicKeyBase58)
        assert.deepEqual(ed25519FromSeed(hex(v.seed)).publicKey, publicKey)
        assert.equal(didKeyFromEd25519(publicKey), v.did)
        assert.deepEqual(ed25519FromDidKey(v.did), publicKey)
        assert.deepEqual(ed25519FromDidKey(v.verificationMethod), publicKey)
        assert.equal(didKeyVerificationMethod(v.did), v.verificationMethod)
        assert.equal(didKeyVerificationMethod(v.verificationMethod), v.verificationMethod)
      })
    }
  })

  it('refuses keys of other multicodecs: X25519 and the NIST curves', () => {
    for (const v of data.vectors) {
      const x25519 = `did:key:${v.keyAgreementId.slice(1)}`
      assert.throws(() => ed25519FromDidKey(x25519), /not an Ed25519 key \(multicodec 0xec\)/)
    }
    for (const [curve, did] of Object.entries(data.otherKeyTypes)) {
      if (curve === 'source') continue
      assert.throws(() => ed25519FromDidKey(did), /not an Ed25519 key/, curve)
    }
  })

  it('refuses a fragment that is not the key itself', () => {
    const [v] = data.vectors
    assert.throws(() => ed25519FromDidKey(`${v!.did}#key-1`), /fragment/)
    assert.throws(() => ed25519FromDidKey(`${v!.did}${v!.keyAgreementId}`), /fragment/)
    assert.throws(() => ed25519FromDidKey(`${v!.verificationMethod}#x`), /fragment/)
  })

  it('refuses other methods, other multibases, bad base58 and wrong lengths', () => {
    const [v] = data.vectors
    const id = v!.did.slice('did:key:'.length)
    const bytes = base58.decode(id.slice(1))
    const withKey = (key: Uint8Array) => `did:key:z${base58.encode(new Uint8Array([0xed, 0x01, ...key]))}`
    assert.throws(() => ed25519FromDidKey(`did:web:${id}`), /not a did:key/)
    assert.throws(() => ed25519FromDidKey(id), /not a did:key/)
    assert.throws(
      () => ed25519FromDidKey(`did:key:u${Buffer.from(bytes).toString('base64url')}`),
      /base58btc/,
    )
    assert.throws(() => ed25519FromDidKey(`did:key:z${id.slice(1, -1)}0`), /not valid base58btc/)
    assert.throws(() => ed25519FromDidKey(`did:key:z6MkI${id.slice(5)}`), /not valid base58btc/)
    assert.throws(() => ed25519FromDidKey(withKey(bytes.slice(2, 33))), /not 32 bytes/)
    assert.throws(() => ed25519FromDidKey(withKey(new Uint8Array([...bytes.slice(2), 0]))), /not 32 bytes/)
    assert.throws(() => ed25519FromDidKey('did:key:z'), /not an Ed25519 key \(multicodec malformed\)/)
    assert.throws(() => ed25519FromDidKey('did:key:'), /base58btc/)
  })

  it('refuses to encode a public key that is not 32 bytes', () => {
    assert.throws(() => didKeyFromEd25519(new Uint8Array(31)), /32 bytes/)
    assert.throws(() => didKeyFromEd25519(new Uint8Array(33)), /32 bytes/)
  })
})
