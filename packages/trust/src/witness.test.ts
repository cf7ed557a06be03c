import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { b64Encode } from './base64url.ts'
import { formatAddCheckpoint, parseAddCheckpoint, parseTlogSize } from './witness.ts'

// the example request body of https://c2sp.org/tlog-witness, add-checkpoint
const EXAMPLE = `old 20852014
PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=
jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=
5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=
/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=

example.com/behind-the-sofa
20852163
CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=

— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=
— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=
`

describe('tlog-witness add-checkpoint bodies', () => {
  it('parses the example of the C2SP document and formats it back byte for byte', () => {
    const parsed = parseAddCheckpoint(EXAMPLE)
    assert.equal(parsed.oldSize, 20852014)
    assert.equal(parsed.proof.length, 4)
    assert.equal(b64Encode(parsed.proof[0]!), 'PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=')
    assert.ok(parsed.note.startsWith('example.com/behind-the-sofa\n20852163\n'))
    assert.equal(formatAddCheckpoint(parsed), EXAMPLE)
  })

  it('takes an old size of zero with no proof', () => {
    const parsed = parseAddCheckpoint('old 0\n\norigin\n1\nAAAA\n\n— sig\n')
    assert.deepEqual([parsed.oldSize, parsed.proof.length], [0, 0])
  })

  it('refuses a leading zero, a missing old line, a short hash, more than 63 proof lines and no checkpoint', () => {
    const hash = `${b64Encode(new Uint8Array(32))}\n`
    for (const body of [
      'old 01\n\nnote\n',
      'new 1\n\nnote\n',
      'old 1\nAAAA\n\nnote\n',
      `old 1\n${hash.repeat(64)}\nnote\n`,
      'old 1\n\n',
      'old 1\nnote\n',
    ])
      assert.throws(() => parseAddCheckpoint(body), body)
  })

  it('reads a text/x.tlog.size body, and nothing else', () => {
    assert.equal(parseTlogSize('42\n'), 42)
    for (const body of ['42', '042\n', '-1\n', 'x\n']) assert.throws(() => parseTlogSize(body))
  })
})
