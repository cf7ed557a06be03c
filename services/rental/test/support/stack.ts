import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type RunningService, startService } from '@svc/kit'
import { CookieJar, request, testEnv } from '@svc/kit/testing'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519 } from '@svc/trust/ed25519'
import { idp } from '../../../idp/src/app.ts'
import type { IdpConfig } from '../../../idp/src/config.ts'
import { ADMIN, signInOnPage } from '@svc/testing/idp-flow'
import { rental } from '../../src/app.ts'
import type { RentalConfig } from '../../src/config.ts'

export { ADMIN }

/**
 * A stand-in for the agents service (built elsewhere): only its listing, `GET /agents`, as the
 * contract gives it, with real did:keys. Test data for an external dependency.
 */
export async function agentsStandIn(): Promise<{
  url: string
  agents: Array<Record<string, unknown>>
  close(): Promise<void>
}> {
  const agents: Array<Record<string, unknown>> = []
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/agents') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ agents }))
    } else
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"code":"not_found","message":"no"}}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  for (const [id, name] of [
    ['summariser', 'Summariser'],
    ['extractor', 'Extractor'],
    ['invoice-checker', 'Invoice checker'],
    ['note-taker', 'Note taker'],
    ['team-lead', 'Team lead'],
  ] as const)
    agents.push({
      id,
      name,
      description: `${name}, a built-in demo agent`,
      did: didKeyFromEd25519(generateEd25519().publicKey),
      card_url: `${url}/agents/${id}/.well-known/agent-card.json`,
      skills: [{ id, name }],
    })
  return { url, agents, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

export interface Stack {
  idp: RunningService<IdpConfig>
  rental: RunningService<RentalConfig>
  agents: Awaited<ReturnType<typeof agentsStandIn>>
  /**
   * The idp session of the last browser that signed in with a password: new browsers start with
   * it, as tabs of one browser would, since the idp allows ten password sign-ins a minute per account.
   */
  idpSession?: string
  close(): Promise<void>
}

/** Waits until `check` holds, 20 s at the most. */
export async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 20 s`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** The real idp, the agents stand-in and the real rental, linked as `npm start` links them. */
export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const idpService = await startService(
    idp,
    testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
    { fresh: true },
  )
  const agents = await agentsStandIn()
  const rentalService = await startService(
    rental,
    testEnv({
      IDP_URL: idpService.url,
      AGENTS_URL: agents.url,
      LEDGER_URL: 'http://127.0.0.1:9',
      RENTAL_IDP_ADMIN_TOKEN: ADMIN,
      ...env,
    }),
    { fresh: true },
  )
  await eventually('the rental is ready', async () => (await fetch(`${rentalService.url}/readyz`)).ok)
  return {
    idp: idpService,
    rental: rentalService,
    agents,
    async close() {
      await rentalService.close()
      await agents.close()
      await idpService.close()
    },
  }
}

/**
 * A browser that signs in at the rental as the demo user, up to the callback URL the idp sends it
 * back to (not followed): the jar holds the rental's pending-login cookie and the idp's session.
 */
export async function toCallback(
  stack: Stack,
  jar = new CookieJar(),
  options: { freshIdpSession?: boolean; account?: { email: string; password: string } } = {},
): Promise<{ jar: CookieJar; callback: string }> {
  if (!options.freshIdpSession && stack.idpSession && !jar.get('svc_session'))
    jar.store(new Response(null, { headers: [['set-cookie', `svc_session=${stack.idpSession}`]] }))
  const login = await jar.fetch(`${stack.rental.url}/auth/login`)
  if (login.status !== 302) throw new Error(`/auth/login answered ${login.status}: ${await login.text()}`)
  let location = login.headers.get('location')!
  for (let hop = 0; hop < 8; hop++) {
    if (location.startsWith(`${stack.rental.url}/auth/callback`)) {
      if (!options.account) stack.idpSession = jar.get('svc_session')
      return { jar, callback: location }
    }
    const res = await jar.fetch(new URL(location, stack.idp.url).toString())
    if (res.status === 200 && new URL(location, stack.idp.url).pathname === '/ui/login') {
      location = await signInOnPage(stack.idp, jar, await res.text(), options.account)
      continue
    }
    const next = res.headers.get('location')
    if (!next) throw new Error(`${location} answered ${res.status}: ${await res.text()}`)
    location = next
  }
  throw new Error('too many redirects')
}

/** The whole sign-in (as the demo user, or `account`): the jar then holds the console session; answers /api/me's body. */
export async function signIn(
  stack: Stack,
  jar = new CookieJar(),
  options: { freshIdpSession?: boolean; account?: { email: string; password: string } } = {},
) {
  const { callback } = await toCallback(stack, jar, options)
  const res = await jar.fetch(callback)
  if (res.status !== 302) throw new Error(`the callback answered ${res.status}: ${await res.text()}`)
  const me = await jar.fetch(`${stack.rental.url}/api/me`)
  const body = (await me.json()) as {
    csrf_token: string
    client: { subject: string }
    organization: { id: string; member_id: string; role: string; permissions: string[] }
  }
  return { jar, me: body, csrf: body.csrf_token }
}

export { request }
