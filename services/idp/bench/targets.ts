/**
 * The servers the idp bench (idp.bench.ts) compares, each in its own process for the whole run: our
 * idp as `npm start -w services/idp` runs it (or another checkout's, IDP_BENCH_BASELINE), and
 * oidc-provider with in-memory storage (oidc-provider-server.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '@svc/kit'
import { tempFolder } from '@svc/kit/testing'
import { type Answer, freePort, send } from '../../../bench/load.ts'

export const REDIRECT_URI = 'http://127.0.0.1:9/callback'
const ADMIN = `bench-admin-${randomBytes(12).toString('hex')}`
const DEMO_EMAIL = 'demo@svc.local'
const idpMain = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const oidcProviderMain = fileURLToPath(new URL('./oidc-provider-server.ts', import.meta.url))
const nodeArgs = process.env.IDP_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []

/** Runs `count` jobs over 16 workers (making codes, untimed). */
async function inParallel(count: number, job: () => Promise<void>) {
  let next = 0
  const worker = async () => {
    while (next < count) {
      next++
      await job()
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker))
}

/** A server under test: its /token, its client, and a way to get fresh authorization codes. */
export interface Target {
  label: string
  url: string
  basic: string
  /** The server's process, whose CPU time is read. */
  pid: number
  /** Authorization codes for the client (scope openid offline_access, PKCE S256), with their verifiers. */
  codes(count: number): Promise<Array<{ code: string; verifier: string }>>
  stop(): Promise<void>
}

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}
const basicAuth = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

async function waitFor(url: string, child: ChildProcess, what: string) {
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`)
    if (
      await fetch(url).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${what} did not start`)
}
async function stopChild(child: ChildProcess) {
  if (child.exitCode !== null) return
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
}

/** Our idp as `npm start -w services/idp` runs it, with the limits off and its own data. */
export async function launchIdp(databaseUrl: string | undefined, checkout?: string): Promise<Target> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const dataDir = tempFolder()
  const schema = databaseUrl ? `bench_idp_${randomBytes(4).toString('hex')}` : undefined
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    IDP_PORT: String(port),
    IDP_URL: url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    IDP_ADMIN_TOKEN: ADMIN,
    IDP_TOKEN_RATE_PER_MIN_CLIENT: '0',
    IDP_TOKEN_RATE_PER_MIN_IP: '0',
    IDP_REGISTER_RATE_PER_MIN: '0',
    IDP_DISCOVERY_RATE_PER_MIN: '0',
  }
  delete env.DATABASE_URL
  delete env.DATABASE_SCHEMA
  delete env.REDIS_URL
  if (databaseUrl) Object.assign(env, { DATABASE_URL: databaseUrl, DATABASE_SCHEMA: schema })
  const main = checkout ? join(checkout, 'services/idp/src/main.ts') : idpMain
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', main], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  await waitFor(`${url}/readyz`, child, 'idp')

  const created = await send(`${url}/manage/v1/clients`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Bench',
      client_type: 'confidential',
      first_party: true,
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: 'client_secret_basic',
    }),
  })
  if (created.status !== 201) throw new Error(`client registration answered ${created.status}`)
  const client = JSON.parse(created.body) as { client_id: string; client_secret: string }

  // one sign-in of the development demo account (its password is kept in DATA_DIR), as a browser would
  const cookies = new Map<string, string>()
  const keep = (answer: Answer) => {
    for (const line of answer.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';')
      const at = pair!.indexOf('=')
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
    return answer
  }
  const cookie = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ')
  const loginPage = keep(await send(`${url}/ui/login`))
  const csrf = /name="csrf" value="([^"]+)"/.exec(loginPage.body)?.[1]
  const signedIn = keep(
    await send(`${url}/ui/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookie() },
      body: new URLSearchParams({
        email: DEMO_EMAIL,
        password: readFileSync(join(dataDir, 'idp.demo-password'), 'utf8').trim(),
        csrf: csrf ?? '',
      }).toString(),
    }),
  )
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}: ${signedIn.body}`)

  async function oneCode() {
    const { verifier, challenge } = pkce()
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
      scope: 'openid offline_access',
      state: randomBytes(8).toString('base64url'),
      code_challenge: challenge,
      code_challenge_method: 'S256',
    })
    const answer = await send(`${url}/authorize?${query}`, { headers: { cookie: cookie() } })
    const code = answer.headers.location && new URL(answer.headers.location).searchParams.get('code')
    if (!code) throw new Error(`/authorize answered ${answer.status} ${answer.headers.location ?? ''}`)
    return { code, verifier }
  }

  return {
    label: `${checkout ? 'baseline' : 'ours'}, ${databaseUrl ? 'PostgreSQL' : 'PGlite'}`,
    url,
    pid: child.pid!,
    basic: basicAuth(client.client_id, client.client_secret),
    async codes(count) {
      const codes: Array<{ code: string; verifier: string }> = []
      await inParallel(count, async () => void codes.push(await oneCode()))
      return codes
    },
    async stop() {
      await stopChild(child)
      rmSync(dataDir, { recursive: true, force: true })
      if (databaseUrl && schema)
        await (await openDatabase({ url: databaseUrl, schema, dropSchemaOnClose: true })).close()
    },
  }
}

/** oidc-provider in its own process (oidc-provider-server.ts), with in-memory storage. */
export async function launchOidcProvider(): Promise<Target> {
  const [port, mintPort] = [await freePort(), await freePort()]
  const url = `http://127.0.0.1:${port}`
  const clientId = 'bench'
  const secret = randomBytes(32).toString('base64url')
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', oidcProviderMain], {
    env: {
      ...process.env,
      OIDC_BENCH_PORT: String(port),
      OIDC_BENCH_MINT_PORT: String(mintPort),
      OIDC_BENCH_CLIENT_ID: clientId,
      OIDC_BENCH_CLIENT_SECRET: secret,
      OIDC_BENCH_REDIRECT_URI: REDIRECT_URI,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  await waitFor(`${url}/.well-known/openid-configuration`, child, 'oidc-provider')
  return {
    label: 'oidc-provider, in memory',
    url,
    pid: child.pid!,
    basic: basicAuth(clientId, secret),
    async codes(count) {
      const pairs = Array.from({ length: count }, pkce)
      const answer = await send(`http://127.0.0.1:${mintPort}/codes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ challenges: pairs.map((p) => p.challenge) }),
      })
      if (answer.status !== 200) throw new Error(`minting codes answered ${answer.status}: ${answer.body}`)
      const { codes } = JSON.parse(answer.body) as { codes: string[] }
      return codes.map((code, i) => ({ code, verifier: pairs[i]!.verifier }))
    },
    stop: () => stopChild(child),
  }
}
