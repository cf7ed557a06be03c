/**
 * Every HTML page of every service carries the same security headers (the kit's page-headers
 * hook): the test walks each service's GET routes (its OpenAPI document, the root, the API
 * reference and a page that does not exist), the idp's also signed in, and checks every answer
 * that is text/html. A new page cannot forget them: it is walked as soon as it has a route.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '../packages/kit/src/index.ts'
import { CookieJar, testEnv } from '../packages/kit/src/testing.ts'
import { agents } from '../services/agents/src/app.ts'
import { idp } from '../services/idp/src/app.ts'
import { ledger } from '../services/ledger/src/app.ts'
import { rental } from '../services/rental/src/app.ts'
import { ADMIN, signInOnPage } from '@svc/testing/idp-flow'

interface Page {
  path: string
  headers: Headers
}

/** The service's GET routes with their parameters filled, and the pages no document lists. */
async function routesOf(url: string): Promise<string[]> {
  const doc = (await (await fetch(`${url}/openapi.json`)).json()) as { paths: Record<string, object> }
  const listed = Object.entries(doc.paths)
    .filter(([, operations]) => 'get' in operations)
    .map(([path]) => path.replace(/\{[^}]+\}/g, 'x'))
  return [...new Set(['/', '/docs', '/no-such-page', ...listed])]
}

/** Every route asked for as a browser would; the answers that are HTML pages. */
async function walk(url: string, paths: string[], jar = new CookieJar()): Promise<Page[]> {
  const pages: Page[] = []
  for (const path of paths) {
    let res: Response
    try {
      res = await jar.fetch(`${url}${path}`, {
        headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8' },
        signal: AbortSignal.timeout(5_000),
      })
    } catch {
      continue // a stream that stays open: not a page
    }
    if (/^text\/html/i.test(res.headers.get('content-type') ?? '')) pages.push({ path, headers: res.headers })
    await res.body?.cancel().catch(() => {})
  }
  return pages
}

function checkPage({ path, headers }: Page) {
  const csp = headers.get('content-security-policy') ?? ''
  assert.match(csp, /(^|;)\s*frame-ancestors 'none'/, `${path}: frame-ancestors in ${csp}`)
  assert.equal(headers.get('x-frame-options'), 'DENY', `${path}: X-Frame-Options`)
  assert.doesNotMatch(csp, /script-src[^;]*'unsafe-inline'/, `${path}: inline scripts allowed`)
  assert.match(csp, /(^|;)\s*(default-src|script-src) /, `${path}: no script policy`)
  assert.equal(headers.get('x-content-type-options'), 'nosniff', `${path}: nosniff`)
  assert.ok(headers.get('referrer-policy'), `${path}: Referrer-Policy`)
  assert.match(headers.get('cache-control') ?? '', /no-store/, `${path}: Cache-Control`)
}

describe('every HTML page of every service carries the security headers', () => {
  const services: Record<string, RunningService<unknown>> = {}

  before(async () => {
    services.idp = (await startService(
      idp,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )) as RunningService<unknown>
    services.ledger = (await startService(ledger, testEnv(), { fresh: true })) as RunningService<unknown>
    services.agents = (await startService(agents, testEnv({ IDP_URL: services.idp.url }), {
      fresh: true,
    })) as RunningService<unknown>
    services.rental = (await startService(
      rental,
      testEnv({
        IDP_URL: services.idp.url,
        AGENTS_URL: services.agents.url,
        LEDGER_URL: services.ledger.url,
        RENTAL_IDP_ADMIN_TOKEN: ADMIN,
      }),
      { fresh: true },
    )) as RunningService<unknown>
  })
  after(async () => {
    for (const name of ['rental', 'agents', 'ledger', 'idp']) await services[name]?.close()
  })

  for (const [name, least] of [
    ['ledger', 2],
    ['agents', 2],
    ['rental', 4],
  ] as const)
    it(`the ${name}'s pages`, async () => {
      const pages = await walk(services[name]!.url, await routesOf(services[name]!.url))
      assert.ok(pages.length >= least, `${name}: ${pages.map((p) => p.path).join(', ')}`)
      pages.forEach(checkPage)
    })

  it("the idp's pages, signed out and signed in (sign-in, consent, account, device, logout, errors)", async () => {
    const url = services.idp!.url
    const paths = await routesOf(url)
    const anonymous = await walk(url, paths)
    const jar = new CookieJar()
    const login = await jar.fetch(`${url}/ui/login`)
    await signInOnPage(services.idp as never, jar, await login.text())
    // the logout routes last: they end the session the others need
    const ordered = [...paths.filter((p) => !/logout/.test(p)), ...paths.filter((p) => /logout/.test(p))]
    const signedIn = await walk(url, ordered, jar)
    const seen = new Set([...anonymous, ...signedIn].map((p) => p.path))
    for (const path of ['/ui/login', '/ui/account', '/device', '/logout', '/no-such-page'])
      assert.ok(
        seen.has(path) || path === '/no-such-page',
        `${path} was not an HTML page: ${[...seen].join(', ')}`,
      )
    assert.ok(seen.size >= 10, [...seen].join(', '))
    ;[...anonymous, ...signedIn].forEach(checkPage)
  })
})
