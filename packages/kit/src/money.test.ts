import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatMoney, minorToDecimal, money, vatIncluded, vatShareOf } from './money.ts'

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

describe('VAT inside VAT-inclusive prices', () => {
  it('takes gross × 5 / 105 half-up, and shares of parts add up to the whole’s VAT', () => {
    assert.deepEqual(
      [10, 11, 21, 2500, 2625, 2 ** 40].map((g) => vatIncluded(g)),
      [0, 1, 1, 119, 125, 52_357_696_561],
    )
    assert.equal(vatShareOf(2500, 2500, 119), 119)
    assert.equal(vatShareOf(0, 2500, 119), 0)
    // 1250 + 1250 of 2500: 59.5 → 60, then 119 − 60 = 59
    assert.equal(vatShareOf(1250, 2500, 119), 60)
    for (const parts of [
      [1, 1, 2498],
      [833, 833, 834],
      [7, 2493],
    ]) {
      let before = 0
      let total = 0
      for (const p of parts) {
        total += vatShareOf(before + p, 2500, 119) - vatShareOf(before, 2500, 119)
        before += p
      }
      assert.equal(total, 119, String(parts))
    }
    // an escrow released before VAT was posted has none to take back
    assert.equal(vatShareOf(100, 2500, 0), 0)
    assert.throws(() => vatIncluded(-1), RangeError)
  })
})
