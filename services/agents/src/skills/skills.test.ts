import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { extract } from './extract.ts'
import { ibanValid } from './iban.ts'
import { checkInvoice } from './invoice.ts'
import { formatMinor, mulDivRound, toMinor } from './money.ts'
import { splitSentences, summarise } from './summarise.ts'
import { EMAIL, INVOICE, PARAGRAPH } from '../../test/agents/fixtures.ts'

describe('summariser skill', () => {
  it('splits sentences, not at abbreviations', () => {
    assert.deepEqual(splitSentences('Dr. Smith came. He left!\n\nNew paragraph? Yes'), [
      'Dr. Smith came.',
      'He left!',
      'New paragraph?',
      'Yes',
    ])
  })

  it('keeps the top sentences by term frequency, in their original order, the same every time', () => {
    const result = summarise(PARAGRAPH, 3)
    assert.equal(result.sentence_count, 6)
    assert.deepEqual(
      result.selected.map((s) => s.index),
      [...result.selected.map((s) => s.index)].sort((a, b) => a - b),
    )
    assert.equal(result.selected.length, 3)
    assert.ok(!result.summary.includes('weather'), 'the off-topic sentence is left out')
    assert.ok(result.summary.includes('receipt'))
    assert.deepEqual(summarise(PARAGRAPH, 3), result)
    assert.equal(summarise('One sentence only', 3).summary, 'One sentence only')
    assert.equal(summarise('', 3).summary, '')
  })
})

describe('extractor skill', () => {
  it('finds emails, dates, amounts with currency and valid IBANs in an email', () => {
    const found = extract(EMAIL)
    assert.equal(found.subject, 'Payment for invoice INV-2041')
    assert.deepEqual(found.emails, ['layla@example.ae', 'accounts@vendor.co.uk'])
    assert.deepEqual(
      found.dates.map((d) => d.date),
      ['2025-03-31', '2025-03-31', '2025-03-12', '2025-03-03'],
    )
    assert.deepEqual(
      found.amounts.map((a) => [a.currency, a.amount, a.minor]),
      [
        ['AED', '12500.00', 1250000],
        ['AED', '2000.00', 200000],
        ['USD', '45.50', 4550],
      ],
    )
    assert.deepEqual(found.ibans, [
      { text: 'GB82 WEST 1234 5698 7654 32', iban: 'GB82WEST12345698765432', country: 'GB' },
    ])
    assert.deepEqual(found.invalid_ibans, [{ text: 'GB82WEST12345698765433', reason: 'mod-97 check failed' }])
  })

  it('validates IBANs with mod-97 and the country length', () => {
    assert.equal(ibanValid('GB82WEST12345698765432'), true)
    assert.equal(ibanValid('AE070331234567890123456'), true)
    assert.equal(ibanValid('DE89370400440532013000'), true)
    assert.equal(ibanValid('GB82WEST1234569876543'), false)
    assert.equal(ibanValid('GB83WEST12345698765432'), false)
  })
})

describe('invoice-checker skill', () => {
  it('recomputes lines, subtotal, VAT at the stated rate and total, and reports the mismatches', () => {
    const check = checkInvoice(INVOICE)
    assert.equal(check.currency, 'AED')
    assert.deepEqual(
      check.lines.map((l) => [l.description, l.quantity, l.unit_price, l.computed, l.stated]),
      [
        ['Pallet wrapping', '2', '150.00', '300.00', '300.00'],
        ['Forklift hour', '3', '200.00', '600.00', '650.00'],
        ['Delivery fee', '1', '75.50', '75.50', '75.50'],
      ],
    )
    assert.deepEqual(check.subtotal, { computed: '975.50', stated: '1025.50' })
    assert.deepEqual(check.vat, {
      rate_percent: '5.00',
      rate_source: 'stated',
      computed: '48.78',
      stated: '51.28',
    })
    assert.deepEqual(check.total, { computed: '1024.28', stated: '1076.78' })
    assert.deepEqual(
      check.mismatches.map((m) => [m.field, m.difference]),
      [
        ['lines[1]', '50.00'],
        ['subtotal', '50.00'],
        ['vat', '2.50'],
        ['total', '52.50'],
      ],
    )
    assert.equal(check.ok, false)
  })

  it('accepts a correct invoice, defaulting VAT to 5%, and applies a stated rate', () => {
    const ok = checkInvoice(
      '1.5 x Consulting hour @ 400 = 600.00\nSubtotal 600.00\nVAT 30.00\nTotal due 630.00',
    )
    assert.equal(ok.vat.rate_source, 'default')
    assert.equal(ok.ok, true, JSON.stringify(ok.mismatches))
    const rated = checkInvoice('4 x Licence @ USD 25.00\nVAT (15%) 15.00\nTotal 115.00')
    assert.equal(rated.currency, 'USD')
    assert.equal(rated.vat.rate_percent, '15.00')
    assert.equal(rated.ok, true)
    assert.equal(checkInvoice('nothing to see').ok, false)
  })

  it('counts money in integer minor units, rounding half away from zero', () => {
    assert.equal(toMinor('1,234.5', 2), 123450)
    assert.equal(toMinor('1.234', 2), undefined)
    assert.equal(formatMinor(-250, 2), '-2.50')
    assert.equal(mulDivRound(97550, 500, 10000), 4878)
    assert.equal(mulDivRound(5, 1, 2), 3)
  })
})
