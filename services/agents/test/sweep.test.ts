import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { sweepBadInput } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures, BAD_INPUT_PROBLEMS } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, type Operation } from '@svc/kit/testing/sweep/operations'
import { agents } from '../src/app.ts'
import type { AgentsConfig } from '../src/config.ts'
import type { IdpConfig } from '../../idp/src/config.ts'
import { newCaller, registerResource, startIdp } from './callers.ts'

describe('agents: the bad-input sweep over every operation of /openapi.json', () => {
  let idpService: RunningService<IdpConfig>
  let service: RunningService<AgentsConfig>
  let token: string
  before(async () => {
    idpService = await startIdp()
    service = await startService(
      agents,
      testEnv({ AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url'), IDP_URL: idpService.url }),
      { fresh: true },
    )
    await registerResource(idpService, service.url)
    token = (await newCaller(idpService, 'sweeper', service.url)).token
  })
  after(async () => {
    await service.close()
    await idpService.close()
  })

  /** The agents' callers carry an idp access token for the agents (idpBearer); a scheme added later must be given here. */
  const credential = (op: Operation): Record<string, string> => {
    if (op.security.length === 0) return {}
    if (op.security.flat().every((scheme) => scheme === 'idpBearer'))
      return { authorization: `Bearer ${token}` }
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
