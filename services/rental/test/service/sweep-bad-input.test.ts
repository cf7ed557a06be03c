import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { sweepBadInput } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures, BAD_INPUT_PROBLEMS } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, type Operation } from '@svc/kit/testing/sweep/operations'
import { sweepParserErrors } from '@svc/kit/testing/sweep/parser'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { aliceObjects, toolCredential } from '../support/sweep-objects.ts'

/**
 * Sent after every other operation, each for its reason: their effect would leave the sweep
 * without the credential the rest of it needs.
 */
const LAST: Record<string, string> = {
  'POST /auth/logout': 'ends the sweep’s console session',
  'POST /api/tokens/{}/rotate': 'replaces the token the other token routes are probed with',
  'DELETE /api/tokens/{}': 'revokes the token the other token routes are probed with',
  'POST /api/agents/{}/revoke': 'the kill switch: the agent would serve no more tasks',
}

describe('rental: the bad-input sweep over every operation of /openapi.json', () => {
  let stack: FullStack
  let agentToken = ''
  /** A tool-call credential of alice's held task (as the rental gives a running task's agent). */
  let toolToken = ''
  /** Alice's objects, so that requests reach past the lookup of their id. */
  const ids: Record<string, string> = {}
  before(async () => {
    stack = await startFullStack()
    const made = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'sweep' })
    agentToken = made.body.token as string
    if (!agentToken) throw new Error(`no agt_ token: ${made.text}`)
    Object.assign(ids, await aliceObjects(stack))
    toolToken = await toolCredential(stack, ids.approvals!)
  })
  after(async () => stack.close())

  /** The credential the operation's Auth class (endpoints.tsv) or security scheme (OpenAPI) names. */
  const credential = (op: Operation): Record<string, string> => {
    const session = { cookie: stack.alice.jar.header(), 'x-csrf-token': stack.alice.csrf }
    // the /v1 tenant routes take the session (or an organization key, which sweep-auth probes)
    if (op.auth === 'S' || op.auth === 'S+C' || op.auth === 'tenant') return session
    if (op.security.some((s) => s.includes('agtBearer'))) return { authorization: `Bearer ${agentToken}` }
    if (op.security.some((s) => s.includes('taskToolToken'))) return { authorization: `Bearer ${toolToken}` }
    // a team hop's credential lives while its task runs: a well-formed one the rental does not know
    if (op.security.some((s) => s.includes('teamHopBearer'))) return { authorization: 'Bearer hop_sweep' }
    if (op.auth === 'P') return {}
    throw new Error(`the sweep holds no credential for ${op.method} ${op.path} (auth ${op.auth}): add one`)
  }

  it('takes JSON body types as sent: a number for the label is 400, not the string "12345" (finding 9)', async () => {
    const res = await stack.alice.jar.fetch(`${stack.rental.url}/api/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': stack.alice.csrf },
      body: '{"label":12345}',
    })
    assert.equal(res.status, 400, await res.text())
    const zipped = await stack.alice.jar.fetch(`${stack.rental.url}/api/tokens`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'x-csrf-token': stack.alice.csrf,
      },
      body: gzipSync('{"label":"zipped"}'),
    })
    assert.equal(zipped.status, 415)
    const long = await fetch(`${stack.rental.url}/api/tasks/${'t'.repeat(9 * 1024)}`)
    assert.equal(long.status, 414)
    assert.ok(!(await long.text()).includes('t'.repeat(100)), 'the long path is not echoed')
  })

  it('answers what the HTTP parser refuses in its error shape, over raw sockets, and issues no token', async (t) => {
    // bob's session: the sweep below ends alice's
    const { bob } = stack
    const { failures, sent } = await sweepParserErrors({
      baseUrl: stack.rental.url,
      shape: 'api',
      target: {
        method: 'POST',
        path: '/api/tokens',
        headers: { cookie: bob.jar.header(), 'x-csrf-token': bob.csrf, 'content-type': 'application/json' },
        body: '{"label":"parser sweep"}',
      },
      state: async () => (await stack.call(bob, 'GET', '/api/tokens')).body.tokens,
    })
    t.diagnostic(`${sent} requests`)
    assert.deepEqual(failures, [])
  })

  it('answers every malformed request with a 4XX in its error shape, and 401 first to one without its credential', async (t) => {
    const { operations, spec } = await fetchOperations(stack.rental.url, 'rental')
    if (!spec) t.diagnostic('endpoints.tsv not found: Auth classes come from the OpenAPI security only')
    const started = Date.now()
    const { failures, sent, slowest } = await sweepBadInput({
      service: 'rental',
      baseUrl: stack.rental.url,
      shape: 'api',
      operations,
      credential,
      requiresCredential: (op) => op.auth !== 'P',
      last: LAST,
      ids,
      seed: 16,
      runs: 24,
    })
    t.diagnostic(`${operations.length} operations, ${sent} requests in ${Date.now() - started} ms`)
    t.diagnostic(`slowest operations: ${slowest.join(', ')}`)
    assertNoUnknownFailures('rental', BAD_INPUT_PROBLEMS, failures, (l) => t.diagnostic(l))
  })
})
