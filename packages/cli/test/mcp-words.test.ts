import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SvcError } from '@svc/client'
import { aed, errorWords, parseAed, receiptWords } from '../src/mcp/words.ts'

describe('the MCP server’s words', () => {
  it('writes fils as AED and reads an --allow-spend amount', () => {
    assert.deepEqual(
      [aed(0), aed(6000), aed(123456789), aed(-286), aed(5)],
      ['AED 0.00', 'AED 60.00', 'AED 1,234,567.89', '-AED 2.86', 'AED 0.05'],
    )
    assert.deepEqual(
      ['25', '25.5', '25.50', 'AED 100', ' 0.05 '].map(parseAed),
      [2500, 2550, 2550, 10_000, 5],
    )
    for (const wrong of ['', '-5', '1.234', 'ten', '1e3', '25,00'])
      assert.equal(parseAed(wrong), undefined, wrong)
  })

  it('names every receipt check, and says so when one fails', () => {
    const text = receiptWords('tsk_1', {
      ok: false,
      ledger_index: 7,
      checks: [
        { check: 'format', ok: true, detail: 'svc-receipt-bundle/v1' },
        { check: 'receipt signature', ok: false, detail: 'the signature does not verify' },
      ],
    })
    assert.equal(
      text,
      'The receipt of task tsk_1 (ledger entry 7) FAILED verification: do not rely on it.\n' +
        '- ok format: svc-receipt-bundle/v1\n' +
        '- FAILED receipt signature: the signature does not verify',
    )
  })

  it('puts an error in one sentence: a known code in words, else the service’s message, never a stack', () => {
    assert.match(errorWords(new SvcError('unauthenticated', 401, 'no token')), /run `svc login`/)
    assert.equal(
      errorWords(new SvcError('invalid_period', 400, 'from is after to')),
      'The rental refused this (invalid_period): from is after to.',
    )
    assert.match(errorWords(new SvcError('http_0', 0, 'fetch failed')), /did not answer/)
    const thrown = new Error('first line\n    at somewhere (file.ts:1:1)')
    assert.equal(errorWords(thrown), 'Something went wrong: first line')
  })
})
