import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatMoney, minorToDecimal, money } from './money.ts'

describe('money: integer fils shown as a person reads them', () => {
  it('writes the exact decimal of minor units, signs and small amounts included', () => {
    assert.equal(minorToDecimal(6000), '60.00')
    assert.equal(minorToDecimal(5), '0.05')
    assert.equal(minorToDecimal(-5), '-0.05')
    assert.equal(minorToDecimal(0), '0.00')
    assert.equal(minorToDecimal(Number.MAX_SAFE_INTEGER), '90071992547409.91')
  })

  it('formats in English and in Arabic (Arabic-Indic digits, the dirham sign), exactly up to 2^53', () => {
    assert.equal(formatMoney(6000), 'AED\u00a060.00')
    assert.equal(formatMoney(Number.MAX_SAFE_INTEGER), 'AED\u00a090,071,992,547,409.91')
    const ar = formatMoney(6000, 'AED', 'ar')
    assert.match(ar, /٦٠٫٠٠/)
    assert.match(ar, /د\.إ/)
    assert.deepEqual(money(123456), { amount_fils: 123456, currency: 'AED', display: 'AED\u00a01,234.56' })
  })
})
