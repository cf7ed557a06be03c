import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { sweepBadInput } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures, BAD_INPUT_PROBLEMS } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, type Operation } from '@svc/kit/testing/sweep/operations'
import { agents } from '../src/app.ts'
import type { AgentsConfig } from '../src/config.ts'

describe('agents: the bad-input sweep over every operation of /openapi.json', () => {
  let service: RunningService<AgentsConfig>
  before(async () => {
    service = await startService(
      agents,
      testEnv({ AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url') }),
      {
        fresh: true,
      },
    )
  })
  after(async () => service.close())

  /** The service names no security scheme today; one added later must be given a credential here. */
  const credential = (op: Operation): Record<string, string> => {
    if (op.security.length === 0) return {}
    throw new Error(
      `the sweep holds no credential for ${op.method} ${op.path} (${op.security.flat().join(', ')})`,
    )
  }

  it('answers every malformed request with a 4XX in its error shape', async (t) => {
    const { operations } = await fetchOperations(service.url, 'agents')
    const started = Date.now()
    const { failures, sent } = await sweepBadInput({
      service: 'agents',
      baseUrl: service.url,
      shape: 'api',
      operations,
      credential,
      requiresCredential: (op) => op.security.length > 0,
      ids: { agents: 'summariser' },
      seed: 16,
      runs: 24,
    })
    t.diagnostic(`${operations.length} operations, ${sent} requests in ${Date.now() - started} ms`)
    assertNoUnknownFailures('agents', BAD_INPUT_PROBLEMS, failures, (l) => t.diagnostic(l))
  })
})
