import { after, before, describe, it } from 'node:test'
import { collectionOf, probe } from '@svc/kit/testing/sweep/auth'
import type { Failure } from '@svc/kit/testing/sweep/bad-input'
import { assertNoUnknownFailures } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, key } from '@svc/kit/testing/sweep/operations'
import { orgWithObjects, startIdpForSweep } from './sweep-setup.ts'

/** Id parameters of organization routes that the sweep cannot give another organization's object for, with why. */
const NOT_PROBED: Record<string, string> = {
  members:
    'a member exists only once an invited user accepts by email; no helper makes one yet (org-members.test.ts covers membership)',
}

/** Auth classes whose credential is a header the sweep leaves out: A admin token, O organization key, U access token. */
const REFUSED_WITHOUT = new Set(['A', 'O', 'U'])

describe('idp: the auth and tenancy sweep (endpoints.tsv Auth column and /openapi.json)', () => {
  let setup: Awaited<ReturnType<typeof startIdpForSweep>>
  let mine: Awaited<ReturnType<typeof orgWithObjects>>
  let theirs: Awaited<ReturnType<typeof orgWithObjects>>
  before(async () => {
    setup = await startIdpForSweep()
    mine = await orgWithObjects(setup.service, 'Mine')
    theirs = await orgWithObjects(setup.service, 'Theirs')
  })
  after(async () => setup.service.close())

  it('refuses every /manage, /orgs and user-token route without its credential (401), and another organization’s objects (404)', async (t) => {
    const { operations, spec } = await fetchOperations(setup.service.url, 'idp')
    if (!spec) t.diagnostic('endpoints.tsv not found: Auth classes come from the OpenAPI security only')
    const base = setup.service.url
    const failures: Array<Failure | undefined> = []
    let probes = 0
    // rotating the key last: it replaces the key the other probes use
    const ordered = [...operations].sort(
      (a, b) => Number(a.path === '/orgs/rotate-key') - Number(b.path === '/orgs/rotate-key'),
    )
    for (const op of ordered) {
      const owned = collectionOf(op)
      const theirIds =
        owned && theirs.ids[owned.collection] ? { [owned.param]: theirs.ids[owned.collection]! } : {}
      if (REFUSED_WITHOUT.has(op.auth)) {
        probes++
        failures.push(
          await probe('idp', 'oauth', op, base, { expect: 401, headers: {}, ids: theirIds }, 'no credential'),
        )
      }
      if (op.auth !== 'O' || !owned) continue
      if (owned.collection in NOT_PROBED) continue
      if (!theirs.ids[owned.collection]) {
        failures.push({
          service: 'idp',
          op: key(op.method, op.path).replace('{}', '{…}'),
          problem: 'tenancy',
          request: `${op.method} ${op.path}`,
          status: 0,
          body: `the sweep makes no ${owned.collection} object: add one to sweep-setup.ts or to NOT_PROBED with a reason`,
        })
        continue
      }
      probes++
      failures.push(
        await probe(
          'idp',
          'oauth',
          op,
          base,
          { expect: 404, headers: { authorization: `Bearer ${mine.key}` }, ids: theirIds },
          'tenancy',
        ),
      )
    }
    // the control: each organization reads its own objects, so the 404s are about the tenant, not the ids
    for (const org of [mine, theirs]) {
      const own = await org.call('GET', `/orgs/clients/${org.clientId}`)
      if (own.status !== 200) throw new Error(`an organization reads its own client with ${own.status}`)
    }
    t.diagnostic(
      `${operations.length} operations, ${probes} probes; not probed: ${JSON.stringify(NOT_PROBED)}`,
    )
    assertNoUnknownFailures(
      'idp',
      ['not refused', 'tenancy'],
      failures.filter((f): f is Failure => f !== undefined),
      (l) => t.diagnostic(l),
    )
  })
})
