import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sweepBadInput } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures, BAD_INPUT_PROBLEMS } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, type Operation } from '@svc/kit/testing/sweep/operations'
import { sweepParserErrors } from '@svc/kit/testing/sweep/parser'
import { ADMIN } from '@svc/testing/idp-flow'
import { credentialFor, orgWithObjects, startIdpForSweep } from './sweep-setup.ts'

/** Sent after every other operation, each for its reason: their effect would take a credential the rest need. */
const LAST: Record<string, string> = {
  'POST /orgs/rotate-key': 'replaces the organization key the /orgs routes are sent with',
  'POST /manage/v1/clients/{}/rotate-secret': 'a real client id is probed; the sweep’s own client is another',
  'POST /manage/v1/keys/rotate': 'an immediate rotation retires the key that signed the sweep’s access token',
  'POST /ui/account/delete': 'would delete the signed-in account',
  'GET /logout': 'ends the idp session the S routes are sent with',
  'POST /logout': 'ends the idp session the S routes are sent with',
  'POST /ui/logout': 'ends the idp session the S routes are sent with',
}

/**
 * Auth classes where a request lacking the credential may be refused for something else first:
 * C (RFC 6749 §5.2: a token request must parse before its client is known, and a public client
 * sends no secret, so invalid_request can rightly come first), U+C (either credential), signed
 * (a bad signature is 403, finding 1), P (public).
 */
const MUST_AUTHENTICATE = new Set(['A', 'O', 'U', 'S'])

describe('idp: the bad-input sweep over every operation of /openapi.json', () => {
  let setup: Awaited<ReturnType<typeof startIdpForSweep>>
  let org: Awaited<ReturnType<typeof orgWithObjects>>
  before(async () => {
    setup = await startIdpForSweep()
    org = await orgWithObjects(setup.service, 'Sweep')
  })
  after(async () => setup.service.close())

  it('takes JSON body types as sent, refuses other charsets and encodings (finding 9)', async () => {
    const signup = (body: string, type = 'application/json') =>
      fetch(`${setup.service.url}/orgs/signup`, { method: 'POST', headers: { 'content-type': type }, body })
    const numeric = await signup(
      '{"name":12345,"contact_email":"ops@numeric.example.com","accept_terms":true}',
    )
    assert.equal(numeric.status, 400, await numeric.text())
    const latin1 = await signup(
      '{"name":"Caf\u00e9","contact_email":"ops@latin.example.com","accept_terms":true}',
      'application/json; charset=latin1',
    )
    assert.equal(latin1.status, 415)
    assert.equal(((await latin1.json()) as { error: string }).error, 'invalid_request')
  })

  it('answers every malformed request with a 4XX in RFC 6749 form, and 401 first to one without its credential', async (t) => {
    const { operations, spec } = await fetchOperations(setup.service.url, 'idp')
    if (!spec) t.diagnostic('endpoints.tsv not found: Auth classes come from the OpenAPI security only')
    const started = Date.now()
    const { failures, sent } = await sweepBadInput({
      service: 'idp',
      baseUrl: setup.service.url,
      shape: 'oauth',
      operations,
      credential: credentialFor(setup, org.key),
      requiresCredential: (op: Operation) => MUST_AUTHENTICATE.has(op.auth),
      last: LAST,
      // the inbound activity webhook is addressed by a client id (one with a webhook secret) under `svc`
      ids: { ...org.ids, svc: setup.clientId },
      // public and session routes are where a person's browser is: their errors may be pages
      pages: (op) => op.auth === 'P' || op.auth === 'S',
      seed: 16,
      runs: 12,
    })
    t.diagnostic(`${operations.length} operations, ${sent} requests in ${Date.now() - started} ms`)
    assertNoUnknownFailures('idp', BAD_INPUT_PROBLEMS, failures, (l) => t.diagnostic(l))
  })

  it('answers what the HTTP parser refuses in RFC 6749 form, over raw sockets, and registers no client', async (t) => {
    const admin = { 'x-admin-token': ADMIN }
    const { failures, sent } = await sweepParserErrors({
      baseUrl: setup.service.url,
      shape: 'oauth',
      target: {
        method: 'POST',
        path: '/manage/v1/clients',
        headers: { ...admin, 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'Parser sweep',
          client_type: 'confidential',
          redirect_uris: ['https://parser.example.com/callback'],
        }),
      },
      state: async () => {
        const res = await fetch(`${setup.service.url}/manage/v1/clients`, { headers: admin })
        const { clients } = (await res.json()) as { clients: Array<{ client_id: string }> }
        return clients.map((c) => c.client_id).sort()
      },
    })
    t.diagnostic(`${sent} requests`)
    assert.deepEqual(failures, [])
  })
})
