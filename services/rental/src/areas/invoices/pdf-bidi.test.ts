import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { formatMoney } from '@svc/kit'
import { directionOf, layoutText, visualRuns } from './pdf-bidi.ts'

const drawn = (line: string, base?: 'rtl' | 'ltr') =>
  visualRuns(line, base).map((r) => `${r.rtl ? '<' : '>'}${r.text}`)

describe('the PDFs’ bidi: runs left to right as drawn', () => {
  it('puts an Arabic label at the right of its Latin or numeric value', () => {
    assert.deepEqual(drawn('رقم الفاتورة: INV-2026-000001'), ['>INV-2026-000001', '<رقم الفاتورة: '])
    assert.deepEqual(drawn('تاريخ الإصدار: ٢٤ نوفمبر ٢٠٢٦'), [
      '>٢٠٢٦',
      '< نوفمبر ',
      '>٢٤',
      '<تاريخ الإصدار: ',
    ])
  })

  it('writes money as Intl does in Arabic: the number left to right, the sign to its left, the minus after', () => {
    assert.deepEqual(drawn(formatMoney(129629, 'AED', 'ar')), ['<\u00a0د.إ.', '>١٬٢٩٦٫٢٩'])
    assert.deepEqual(drawn(formatMoney(-6300, 'AED', 'ar')), ['<\u00a0د.إ.', '>٦٣٫٠٠', '<-'])
  })

  it('keeps a value of its own direction: Latin stays left to right with its punctuation', () => {
    assert.equal(directionOf('Job summary (job_summary):'), 'ltr')
    assert.deepEqual(drawn('Job summary (job_summary):', 'ltr'), ['>Job summary (job_summary):'])
    assert.deepEqual(drawn('Acme شركة 12', 'ltr'), ['>Acme ', '>12', '<شركة '])
  })

  it('gives pdfkit text it lays out in the run’s direction, brackets mirrored', () => {
    // fontkit reverses an Arabic run itself; digits it would reverse too go in reversed
    assert.equal(layoutText({ text: 'مدفوعة (', rtl: true }), 'مدفوعة )')
    assert.equal(layoutText({ text: '٦٣٫٠٠', rtl: false }), '٠٠٫٣٦')
    assert.equal(layoutText({ text: ': ', rtl: true }), ' :')
    assert.equal(layoutText({ text: 'INV-1', rtl: false }), 'INV-1')
  })
})
