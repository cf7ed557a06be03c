import { after, before, describe, it } from 'node:test'
import type { Failure } from '@svc/kit/testing/sweep/bad-input'
import { collectionOf, probe, wellFormed } from '@svc/kit/testing/sweep/auth'
import { assertNoUnknownFailures } from '@svc/kit/testing/sweep/known-failures'
import { fetchOperations, key, type Operation } from '@svc/kit/testing/sweep/operations'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { aliceObjects } from '../support/sweep-objects.ts'
import { deviceGrant } from '../support/device-grant.ts'

/** Id parameters that name no client's object, with the reason; every other one is probed across clients. */
const NOT_TENANT_OWNED: Record<string, string> = {
  agents: 'agents belong to the catalogue, which every client sees (their record is public to clients)',
  calls:
    'a tool call read with its task’s tool-call credential, not a session: another task’s credential gets 404 (connect-idp.test.ts)',
  i18n: 'a language code, not an object',
  kya: 'an agent’s DID: any client may have any agent screened (its screenings are its own, GET /api/onboarding)',
  listings:
    'a published market listing is read by every client; changing one is for its organization (another’s: 404, market.test.ts)',
}

/**
 * The /v1 tenant routes (Auth `tenant` in endpoints.tsv) take the console session (S, S+C on
 * writes: their OpenAPI security's first set says which) or an organization key: probed as both.
 */
const sessionClass = (op: Operation): Operation =>
  op.auth === 'tenant'
    ? { ...op, auth: op.security[0]?.includes('csrfToken') ? 'S+C' : op.security[0]?.length ? 'S' : op.auth }
    : op

/** The roles the sweep gives a member of alice's organization (alice is its owner). */
const INVITED_ROLES = ['admin', 'member', 'billing', 'viewer'] as const

describe('rental: the auth and tenancy sweep (endpoints.tsv Auth column and /openapi.json)', () => {
  let stack: FullStack
  let ids: Record<string, string> = {}
  /** An organization key of alice's whose one scope (connections:read) no other /v1 route needs. */
  let narrowKey = ''
  /** Another organization's person's access token from the idp (svc-cli's device grant): a second tenancy probe. */
  let strangerToken = ''
  const members: Record<string, Client> = {}
  before(async () => {
    // no operators: bob (the demo user as another client) would be one in development, and an
    // operator may act on every organization's refunds; the tenancy probes want a plain client
    stack = await startFullStack({ RENTAL_OPERATORS: 'ops@sweep.example' })
    ids = await aliceObjects(stack)
    members.owner = stack.alice
    for (const role of INVITED_ROLES) {
      const email = `${role}@sweep.example`
      const invited = await stack.call(stack.alice, 'POST', '/api/org/members', { email, role })
      if (invited.status !== 201) throw new Error(`invite ${role}: ${invited.status} ${invited.text}`)
      members[role] = await stack.signInWith(email)
    }
    // a member of alice's organization: the object the /api/org/members/{id} routes name
    ids.members = members.viewer!.me.organization.member_id
    const key = await stack.call(stack.alice, 'POST', '/v1/auth/keys', {
      label: 'sweep',
      scopes: ['connections:read'],
    })
    narrowKey = (key.body as { token?: string }).token ?? ''
    if (!narrowKey) throw new Error(`no organization key: ${key.text}`)
    const stranger = await stack.signInWith('stranger@sweep.example')
    const urls = { idp: stack.idp.url, rental: stack.rental.url }
    strangerToken = (await deviceGrant(urls, stranger.jar)).access_token!
  })
  after(async () => stack.close())

  it('refuses every S route without a session (401), every S+C route without CSRF (403), every object of another client, by session or access token (404)', async (t) => {
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
    for (const listed of ordered) {
      const op = sessionClass(listed)
      const owned = collectionOf(op)
      const objectIds = owned && ids[owned.collection] ? { [owned.param]: ids[owned.collection]! } : {}
      if (op.auth === 'S' || op.auth === 'S+C') {
        probes++
        failures.push(
          await probe('rental', 'api', op, base, { expect: 401, headers: {}, ids: objectIds }, 'no session'),
        )
      }
      if (listed.auth === 'tenant' && op.path !== '/v1/connect/connections/health') {
        // the other credential of /v1: an organization key, unknown (401) and of no scope (403 naming it)
        probes += 2
        failures.push(
          await probe(
            'rental',
            'api',
            op,
            base,
            { expect: 401, headers: { authorization: `Bearer ork_${'A'.repeat(43)}` }, ids: objectIds },
            'unknown organization key',
          ),
          await probe(
            'rental',
            'api',
            op,
            base,
            { expect: 403, headers: { authorization: `Bearer ${narrowKey}` }, ids: objectIds },
            'organization key without the scope',
          ),
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
        probes += 2
        failures.push(
          await probe('rental', 'api', op, base, { expect: 404, headers: bob, ids: objectIds }, 'tenancy'),
          // the same with another organization's access token instead of a session (no CSRF token)
          await probe(
            'rental',
            'api',
            op,
            base,
            { expect: 404, headers: { authorization: `Bearer ${strangerToken}` }, ids: objectIds },
            'tenancy',
          ),
        )
        // the control: the owner reads the same object, so the 404 above is about the client, not the id
        if (op.method === 'GET') {
          const path = op.path
            .replace(`{${owned.param}}`, encodeURIComponent(ids[owned.collection]!))
            // a nested object (a team's task): its id under the parameter's name
            .replace(/\{([a-z_]+)\}/g, (whole, param: string) => ids[param] ?? whole)
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

  it('gives each role the routes its permissions name and refuses the others (403 forbidden naming the permission)', async (t) => {
    const { operations } = await fetchOperations(stack.rental.url, 'rental')
    const document = (await (await fetch(`${stack.rental.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-permission'?: string }>>
    }
    const permissionOf = (op: Operation) =>
      document.paths[op.path]?.[op.method.toLowerCase()]?.['x-permission']
    const signedIn = operations.map(sessionClass).filter((op) => op.auth === 'S' || op.auth === 'S+C')
    const failures: Failure[] = []
    let probes = 0
    for (const [role, who] of Object.entries(members)) {
      // the role's permissions as the rental_roles table gives them, through /api/me
      if (who.me.organization.role !== role || who.me.organization.id !== stack.alice.me.organization.id)
        throw new Error(`the ${role} is ${who.me.organization.role} of ${who.me.organization.id}`)
      const granted = new Set(who.me.organization.permissions)
      for (const op of signedIn) {
        const permission = permissionOf(op)
        if (!permission) continue
        probes++
        // placeholder ids: an allowed call passes the check and finds nothing (or does something harmless)
        const req = wellFormed(op, stack.rental.url)
        const res = await who.jar.fetch(req.url, {
          method: op.method,
          headers: { accept: 'application/json', 'x-csrf-token': who.csrf, ...req.headers },
          body: req.body,
          redirect: 'manual',
        })
        const text = await res.text()
        const refused = res.status === 403 && text.includes('"forbidden"') && text.includes(permission)
        if (granted.has(permission) ? res.status === 403 || res.status === 401 : !refused)
          failures.push({
            service: 'rental',
            op: key(op.method, op.path).replace('{}', '{…}'),
            problem: 'not refused',
            request: `${op.method} ${req.url} as ${role} [${permission}: ${granted.has(permission) ? 'allowed' : 'refused'}]`,
            status: res.status,
            body: text.slice(0, 300),
          })
      }
    }
    t.diagnostic(`${Object.keys(members).length} roles, ${probes} probes`)
    const unannotated = signedIn.filter((op) => !permissionOf(op)).map((op) => `${op.method} ${op.path}`)
    t.diagnostic(`signed-in routes any member may call: ${unannotated.join(', ')}`)
    assertNoUnknownFailures('rental', ['not refused'], failures, (l) => t.diagnostic(l))
  })
})
