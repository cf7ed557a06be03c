import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { sweepBadInput } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures, BAD_INPUT_PROBLEMS } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, type Operation } from '@svc/kit/testing/sweep/operations'
import { sweepParserErrors } from '@svc/kit/testing/sweep/parser'
import { agents } from '../../src/app.ts'
import type { AgentsConfig } from '../../src/config.ts'
import type { IdpConfig } from '../../../idp/src/config.ts'
import { newCaller, registerResource, startIdp } from '../support/callers.ts'

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

  it('answers what the HTTP parser refuses in its error shape, over raw sockets, and writes no note', async (t) => {
    const made = await fetch(`${service.url}/tools/notes/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    })
    const { api_key: key } = (await made.json()) as { api_key: string }
    assert.match(key, /^nk_/)
    const mcp = {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }
    const call = (id: number, name: string, args: Record<string, unknown>) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
    const { failures, sent } = await sweepParserErrors({
      baseUrl: service.url,
      shape: 'api',
      target: {
        method: 'POST',
        path: '/tools/notes/mcp',
        headers: mcp,
        body: call(1, 'notes.create', { title: 'parser' }),
      },
      state: async () => {
        const res = await fetch(`${service.url}/tools/notes/mcp`, {
          method: 'POST',
          headers: mcp,
          body: call(2, 'notes.list', {}),
        })
        const answer = (await res.json()) as { result: { structuredContent: { notes: unknown[] } } }
        return answer.result.structuredContent.notes
      },
    })
    t.diagnostic(`${sent} requests`)
    assert.deepEqual(failures, [])
  })
})
