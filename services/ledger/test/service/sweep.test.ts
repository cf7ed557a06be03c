import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { sweepBadInput } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures, BAD_INPUT_PROBLEMS } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, type Operation } from '@svc/kit/testing/sweep/operations'
import { sweepParserErrors } from '@svc/kit/testing/sweep/parser'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'
import { newIssuer, signedReceipt, WRITER, writerEnv } from '../support/helpers.ts'

/** The ledger's only credential is a writer token (its `writer` security scheme). */
const writes = (op: Operation) => op.security.some((s) => s.includes('writer'))

describe('ledger: the bad-input and auth sweep over every operation of /openapi.json', () => {
  let service: RunningService<LedgerConfig>
  before(async () => {
    service = await startService(ledger, testEnv(writerEnv), { fresh: true })
  })
  after(async () => service.close())

  it('answers every malformed request with a 4XX in its error shape, and 401 first to one without its token', async (t) => {
    const { operations } = await fetchOperations(service.url, 'ledger')
    const started = Date.now()
    const { failures, sent } = await sweepBadInput({
      service: 'ledger',
      baseUrl: service.url,
      shape: 'api',
      operations,
      credential: (op): Record<string, string> => (writes(op) ? { authorization: `Bearer ${WRITER}` } : {}),
      requiresCredential: writes,
      seed: 16,
      runs: 24,
    })
    t.diagnostic(`${operations.length} operations, ${sent} requests in ${Date.now() - started} ms`)
    assertNoUnknownFailures('ledger', BAD_INPUT_PROBLEMS, failures, (l) => t.diagnostic(l))
  })

  it('answers what the HTTP parser refuses in its error shape, over raw sockets, and appends nothing', async (t) => {
    const { failures, sent } = await sweepParserErrors({
      baseUrl: service.url,
      shape: 'api',
      target: {
        method: 'POST',
        path: '/v1/receipts',
        headers: { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json' },
        body: JSON.stringify(signedReceipt(newIssuer(), 'tsk_parser')),
      },
      // the tree size, the second line of the signed checkpoint
      state: async () => (await (await fetch(`${service.url}/checkpoint`)).text()).split('\n')[1],
    })
    t.diagnostic(`${sent} requests`)
    assert.deepEqual(failures, [])
  })
})
