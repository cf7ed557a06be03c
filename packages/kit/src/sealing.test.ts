import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { Sealer } from './sealing.ts'

describe('sealing', () => {
  const sealer = new Sealer(randomBytes(32))

  it('opens what it sealed, with a fresh IV each time', () => {
    const a = sealer.seal('whsec_secret', 'client:abc')
    const b = sealer.seal('whsec_secret', 'client:abc')
    assert.notDeepEqual(a, b)
    assert.equal(sealer.open(a, 'client:abc').toString(), 'whsec_secret')
    assert.ok(!a.includes(Buffer.from('whsec_secret')), 'the plaintext is not in the sealed bytes')
  })

  it('refuses another context, another key, or a changed byte', () => {
    const sealed = sealer.seal('secret', 'client:abc')
    assert.throws(() => sealer.open(sealed, 'client:xyz'))
    assert.throws(() => new Sealer(randomBytes(32)).open(sealed, 'client:abc'))
    const tampered = Buffer.from(sealed)
    tampered[tampered.length - 1]! ^= 1
    assert.throws(() => sealer.open(tampered, 'client:abc'))
    assert.throws(() => sealer.open(Buffer.from([2, 0, 0]), 'client:abc'), /not a sealed value/)
  })
})
