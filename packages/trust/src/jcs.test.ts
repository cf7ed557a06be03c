import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { canonicalBytes, canonicalize } from './jcs.ts'

const testdata = new URL('../testdata/jcs/', import.meta.url)

interface NumberSample {
  ieee754: string
  json: string | null
  comment: string
}

const doubleOf = (hex: string): number => Buffer.from(hex, 'hex').readDoubleBE(0)

describe('JCS (RFC 8785)', () => {
  describe('cyberphone/json-canonicalization test data', () => {
    const names = readdirSync(new URL('input/', testdata)).filter((n) => n.endsWith('.json'))
    assert.ok(names.length >= 7)
    for (const name of names) {
      it(`canonicalizes ${name} to the published bytes`, () => {
        const input: unknown = JSON.parse(readFileSync(new URL(`input/${name}`, testdata), 'utf8'))
        const expected = readFileSync(new URL(`output/${name}`, testdata))
        assert.equal(canonicalize(input), expected.toString('utf8'))
        assert.deepEqual(Buffer.from(canonicalBytes(input)), expected)
      })
    }
  })

  describe('RFC 8785 Appendix B number samples', () => {
    const { samples } = JSON.parse(readFileSync(new URL('rfc8785-numbers.json', testdata), 'utf8')) as {
      samples: NumberSample[]
    }
    for (const { ieee754, json, comment } of samples) {
      const label = `${ieee754}${comment ? ` (${comment})` : ''}`
      if (json === null) {
        it(`rejects ${label}`, () => {
          assert.throws(() => canonicalize(doubleOf(ieee754)), TypeError)
          assert.throws(() => canonicalize({ n: [doubleOf(ieee754)] }), TypeError)
        })
      } else {
        it(`serializes ${label} as ${json}`, () => {
          assert.equal(canonicalize(doubleOf(ieee754)), json)
          assert.equal(canonicalize([doubleOf(ieee754)]), `[${json}]`)
        })
      }
    }
  })

  it('sorts property names by UTF-16 code units, not by code points', () => {
    // U+1F600 is the surrogate pair D83D DE00, which sorts below U+FB33 although its code point is higher.
    assert.equal(canonicalize({ '\ufb33': 1, '\u{1f600}': 2 }), '{"\u{1f600}":2,"\ufb33":1}')
  })

  it('rejects values JSON cannot carry instead of dropping them', () => {
    for (const bad of [undefined, () => 1, 1n, Symbol('s'), new Date(0), new Map(), Object.create(null)]) {
      assert.throws(() => canonicalize(bad), TypeError)
      assert.throws(() => canonicalize({ a: bad }), TypeError)
    }
    assert.throws(() => canonicalize([1, , 3]), TypeError) // eslint-disable-line no-sparse-arrays
  })

  it('rejects lone surrogates in strings and property names', () => {
    assert.throws(() => canonicalize('\ud800'), /lone surrogate/)
    assert.throws(() => canonicalize({ '\udc00x': 1 }), /lone surrogate/)
    assert.equal(canonicalize('\ud83d\ude02'), '"\u{1f602}"')
  })
})
