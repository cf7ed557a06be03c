import { after, before, describe, it } from 'node:test'
import type { Failure } from '@svc/kit/testing/sweep/bad-input'
import { collectionOf, probe } from '@svc/kit/testing/sweep/auth'
import { assertNoUnknownFailures } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, key } from '@svc/kit/testing/sweep/operations'
import { type FullStack, startFullStack } from './full-stack.ts'
import { aliceObjects } from './sweep-objects.ts'

/** Id parameters that name no client's object, with the reason; every other one is probed across clients. */
const NOT_TENANT_OWNED: Record<string, string> = {
  agents: 'agents belong to the catalogue, which every client sees (their record is public to clients)',
  i18n: 'a language code, not an object',
}

describe('rental: the auth and tenancy sweep (endpoints.tsv Auth column and /openapi.json)', () => {
  let stack: FullStack
  let ids: Record<string, string> = {}
  before(async () => {
    stack = await startFullStack()
    ids = await aliceObjects(stack)
  })
  after(async () => stack.close())

  it('refuses every S route without a session (401), every S+C route without CSRF (403), every object of another client (404)', async (t) => {
    const { operations, spec } = await fetchOperations(stack.rental.url, 'rental')
    if (!spec) t.diagnostic('endpoints.tsv not found: Auth classes come from the OpenAPI security only')
    const base = stack.rental.url
    const bob = { cookie: stack.bob.jar.header(), 'x-csrf-token': stack.bob.csrf }
    const failures: Array<Failure | undefined> = []
    let probes = 0
    // logout last: it ends the session the other probes use
    const ordered = [...operations].sort(
      (a, b) => Number(a.path === '/auth/logout') - Number(b.path === '/auth/logout'),
    )
    for (const op of ordered) {
      const owned = collectionOf(op)
      const objectIds = owned && ids[owned.collection] ? { [owned.param]: ids[owned.collection]! } : {}
      if (op.auth === 'S' || op.auth === 'S+C') {
        probes++
        failures.push(
          await probe('rental', 'api', op, base, { expect: 401, headers: {}, ids: objectIds }, 'no session'),
        )
      }
      if (op.auth === 'S+C') {
        probes++
        failures.push(
          await probe(
            'rental',
            'api',
            op,
            base,
            { expect: 403, headers: { cookie: bob.cookie }, ids: objectIds },
            'no CSRF',
          ),
        )
      }
      if (owned && op.auth !== 'P' && !(owned.collection in NOT_TENANT_OWNED)) {
        if (!ids[owned.collection]) {
          failures.push({
            service: 'rental',
            op: key(op.method, op.path).replace('{}', '{…}'),
            problem: 'tenancy',
            request: `${op.method} ${op.path}`,
            status: 0,
            body: `the sweep makes no ${owned.collection} object: add one to sweep-objects.ts or to NOT_TENANT_OWNED with a reason`,
          })
          continue
        }
        probes++
        failures.push(
          await probe('rental', 'api', op, base, { expect: 404, headers: bob, ids: objectIds }, 'tenancy'),
        )
        // the control: the owner reads the same object, so the 404 above is about the client, not the id
        if (op.method === 'GET') {
          const path = op.path.replace(`{${owned.param}}`, encodeURIComponent(ids[owned.collection]!))
          const own = await stack.call(stack.alice, 'GET', path)
          if (own.status !== 200) throw new Error(`alice reads ${path} with ${own.status}: ${own.text}`)
        }
      }
    }
    t.diagnostic(`${operations.length} operations, ${probes} probes`)
    assertNoUnknownFailures(
      'rental',
      ['not refused', 'tenancy'],
      failures.filter((f): f is Failure => f !== undefined),
      (l) => t.diagnostic(l),
    )
  })
})
