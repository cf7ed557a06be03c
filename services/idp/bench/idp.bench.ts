/**
 * The idp's /token figures (npm run bench -w services/idp), on the embedded database and, when
 * DATABASE_URL is set, on PostgreSQL too, against oidc-provider (npm) on the same machine:
 *   authorization-code exchanges per second (PKCE S256, scope openid offline_access: an access
 *   token, an ID token and a refresh token each),
 *   refresh-token grants per second (rotation: each worker chains its own family),
 *   client_credentials grants per second (scope api, an RS256 JWT access token each), as Bearer
 *   tokens and bound to a DPoP key (every request with a fresh ES256 proof carrying the server's
 *   nonce, which both servers require; proofs are signed before each timed round),
 *   p50 / p99 latency of each, the server's CPU time per request (and the generator's), and the
 *   ratio ours / oidc-provider.
 * Each server runs in a child process, up for the whole run, and gets the same requests from the
 * same load generator: node:http with keep-alive, IDP_BENCH_CONCURRENCY workers (16),
 * client_secret_basic. Each measure is taken on every server in turn before the next one.
 * Our codes come from the real flow (one sign-in, then /authorize, which a first-party client
 * passes without consent); oidc-provider's are minted inside its process (oidc-provider-server.ts).
 * Counts: IDP_BENCH_CODES (3,000), IDP_BENCH_REFRESH (5,000), IDP_BENCH_CC (20,000 Bearer),
 * IDP_BENCH_CC_DPOP (as IDP_BENCH_CC); 0 leaves that measure out. IDP_BENCH_NODE_ARGS passes
 * flags to both servers (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, rmSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '@svc/kit'
import { tempFolder } from '@svc/kit/testing'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { type Answer, closeConnections, cpuSeconds, freePort, send } from '../../../bench/load.ts'

const CODES = Number(process.env.IDP_BENCH_CODES ?? 3000)
const REFRESH = Number(process.env.IDP_BENCH_REFRESH ?? 5000)
const CLIENT_CREDENTIALS = Number(process.env.IDP_BENCH_CC ?? 20_000)
const DPOP_CLIENT_CREDENTIALS = Number(process.env.IDP_BENCH_CC_DPOP ?? CLIENT_CREDENTIALS)
const CONCURRENCY = Number(process.env.IDP_BENCH_CONCURRENCY ?? 16)
// codes live 60 s on both servers: they are made and exchanged in rounds well within that
const ROUND = 1000
const WARMUP = 200
const ADMIN = `bench-admin-${randomBytes(12).toString('hex')}`
const REDIRECT_URI = 'http://127.0.0.1:9/callback'
const DEMO_EMAIL = 'demo@svc.local'
const idpMain = fileURLToPath(new URL('../src/main.ts', import.meta.url))
const oidcProviderMain = fileURLToPath(new URL('./oidc-provider-server.ts', import.meta.url))
const nodeArgs = process.env.IDP_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []

/** A server under test: its /token, its client, and a way to get fresh authorization codes. */
interface Target {
  label: string
  url: string
  basic: string
  /** The server's process, whose CPU time is read. */
  pid: number
  /** Authorization codes for the client (scope openid offline_access, PKCE S256), with their verifiers. */
  codes(count: number): Promise<Array<{ code: string; verifier: string }>>
  stop(): Promise<void>
}

/** The one shape of token request both servers get. */
function token(target: Target, form: Record<string, string>, dpop?: string): Promise<Answer> {
  return send(`${target.url}/token`, {
    method: 'POST',
    headers: {
      authorization: target.basic,
      'content-type': 'application/x-www-form-urlencoded',
      ...(dpop ? { dpop } : {}),
    },
    body: new URLSearchParams(form).toString(),
  })
}
const exchange = (target: Target, c: { code: string; verifier: string }) =>
  token(target, {
    grant_type: 'authorization_code',
    code: c.code,
    redirect_uri: REDIRECT_URI,
    code_verifier: c.verifier,
  })
function refreshTokenOf(answer: Answer, what: string): string {
  if (answer.status !== 200) throw new Error(`${what} answered ${answer.status}: ${answer.body}`)
  const body = JSON.parse(answer.body) as { refresh_token?: string; id_token?: string }
  if (!body.refresh_token || !body.id_token) throw new Error(`${what} gave no refresh or ID token`)
  return body.refresh_token
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

/** Runs `jobs` over `concurrency` workers; each job's latency is recorded, and the server's CPU. */
async function timed(count: number, job: (i: number, worker: number) => Promise<void>, pid?: number) {
  const latencies: number[] = []
  let next = 0
  const cpuBefore = pid ? cpuSeconds(pid) : Number.NaN
  const ownBefore = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < count) {
        const i = next++
        const t = performance.now()
        await job(i, worker)
        latencies.push(performance.now() - t)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  const own = process.cpuUsage(ownBefore)
  return {
    seconds,
    latencies,
    cpu: pid ? cpuSeconds(pid) - cpuBefore : Number.NaN,
    ownCpu: (own.user + own.system) / 1e6,
  }
}

interface Figures {
  perSecond: number
  p50: number
  p99: number
  count: number
  seconds: number
  /** The server process's CPU time per request, in ms (its libuv threads included; not a database's). */
  cpuMs: number
  /** The load generator's (this process's) CPU time per request, in ms. */
  generatorCpuMs: number
  retries?: number
}
function figures(run: { latencies: number[]; seconds: number; cpu: number; ownCpu: number }): Figures {
  const sorted = [...run.latencies].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
  return {
    perSecond: sorted.length / run.seconds,
    p50: at(0.5),
    p99: at(0.99),
    count: sorted.length,
    seconds: run.seconds,
    cpuMs: (run.cpu * 1000) / sorted.length,
    generatorCpuMs: (run.ownCpu * 1000) / sorted.length,
  }
}

/** `count` jobs in timed rounds of at most ROUND, each round's inputs (codes, proofs) made untimed first. */
async function inRounds<T>(
  target: Target,
  count: number,
  make: (count: number) => Promise<T[]>,
  job: (input: T) => Promise<void>,
): Promise<Figures> {
  const run = { latencies: [] as number[], seconds: 0, cpu: 0, ownCpu: 0 }
  for (let done = 0; done < count; done += ROUND) {
    const inputs = await make(Math.min(ROUND, count - done))
    const round = await timed(inputs.length, (i) => job(inputs[i]!), target.pid)
    run.latencies.push(...round.latencies)
    run.seconds += round.seconds
    run.cpu += round.cpu
    run.ownCpu += round.ownCpu
  }
  return figures(run)
}

/** Code exchanges: codes made (untimed) and exchanged concurrently (timed), round by round. */
async function codeExchanges(target: Target): Promise<Figures> {
  const warm = await target.codes(WARMUP)
  await timed(warm.length, async (i) => void refreshTokenOf(await exchange(target, warm[i]!), 'warm-up'))
  return inRounds(
    target,
    CODES,
    (n) => target.codes(n),
    async (code) => {
      const answer = await exchange(target, code)
      if (answer.status !== 200) throw new Error(`code exchange answered ${answer.status}: ${answer.body}`)
    },
  )
}

/** Refresh grants: one family per worker, each request presenting the token the last one returned. */
async function refreshGrants(target: Target): Promise<Figures> {
  const start = await target.codes(CONCURRENCY)
  const tokens = await Promise.all(start.map(async (c) => refreshTokenOf(await exchange(target, c), 'code')))
  const refresh = async (worker: number) => {
    tokens[worker] = refreshTokenOf(
      await token(target, { grant_type: 'refresh_token', refresh_token: tokens[worker]! }),
      'refresh',
    )
  }
  await timed(WARMUP, (_, worker) => refresh(worker))
  return figures(await timed(REFRESH, (_, worker) => refresh(worker), target.pid))
}

// the token is for the client itself: no resource named, so oidc-provider takes its default one
const CC_FORM = { grant_type: 'client_credentials', scope: 'api' }
// these requests are short: a longer warm-up than the others', so the JIT is done before timing
const CC_WARMUP = 1000
const ok = (answer: Answer, what: string) => {
  if (answer.status !== 200) throw new Error(`${what} answered ${answer.status}: ${answer.body}`)
  return answer
}
function checkAccessToken(answer: Answer, type: 'Bearer' | 'DPoP') {
  const body = JSON.parse(ok(answer, 'client_credentials').body) as {
    access_token?: string
    token_type?: string
  }
  if (body.access_token?.split('.').length !== 3 || body.token_type?.toLowerCase() !== type.toLowerCase())
    throw new Error(`client_credentials gave no ${type} JWT: ${answer.body}`)
}

/** client_credentials grants with Bearer tokens. */
async function clientCredentialsGrants(target: Target): Promise<Figures> {
  await timed(CC_WARMUP, async () => checkAccessToken(await token(target, CC_FORM), 'Bearer'))
  const run = await timed(
    CLIENT_CREDENTIALS,
    async () => void ok(await token(target, CC_FORM), 'client_credentials'),
    target.pid,
  )
  return figures(run)
}

// one ES256 key (an algorithm both servers accept) for every proof: each proof has its own jti
const dpopKey = await generateKeyPair('ES256')
const dpopJwk = await exportJWK(dpopKey.publicKey)
const proof = (htu: string, nonce: string | undefined) =>
  new SignJWT({ jti: randomBytes(16).toString('base64url'), htm: 'POST', htu, ...(nonce ? { nonce } : {}) })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: dpopJwk })
    .setIssuedAt()
    .sign(dpopKey.privateKey)

/**
 * client_credentials grants bound to a DPoP key: every request carries a fresh proof with the
 * server's nonce (both servers require one). The proofs of a round are signed before it is timed
 * (they are fresh for a minute or two on both); an answer asking for a new nonce
 * (`use_dpop_nonce`) is retried with a proof signed then, counted in its latency.
 */
async function dpopClientCredentialsGrants(target: Target): Promise<Figures> {
  const htu = `${target.url}/token`
  const first = await token(target, CC_FORM, await proof(htu, undefined))
  let nonce = first.headers['dpop-nonce'] as string | undefined
  if (first.status !== 400 || !nonce) throw new Error(`a proof without a nonce answered ${first.status}`)
  let retries = 0
  async function grant(signed: string) {
    let answer = await token(target, CC_FORM, signed)
    if (answer.status === 400 && answer.body.includes('use_dpop_nonce')) {
      retries++
      nonce = answer.headers['dpop-nonce'] as string
      answer = await token(target, CC_FORM, await proof(htu, nonce))
    }
    const next = answer.headers['dpop-nonce']
    if (typeof next === 'string') nonce = next
    return answer
  }
  const proofs = (count: number) => Promise.all(Array.from({ length: count }, () => proof(htu, nonce)))
  const warm = await proofs(CC_WARMUP)
  await timed(warm.length, async (i) => checkAccessToken(await grant(warm[i]!), 'DPoP'))
  retries = 0
  const run = await inRounds(target, DPOP_CLIENT_CREDENTIALS, proofs, async (signed) => {
    ok(await grant(signed), 'DPoP client_credentials')
  })
  return { ...run, retries }
}

/** Our idp as `npm start -w services/idp` runs it, with the limits off and its own data. */
async function launchIdp(databaseUrl: string | undefined): Promise<Target> {
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
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', idpMain], {
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
    label: databaseUrl ? 'ours, PostgreSQL' : 'ours, PGlite',
    url,
    pid: child.pid!,
    basic: basicAuth(client.client_id, client.client_secret),
    async codes(count) {
      const codes: Array<{ code: string; verifier: string }> = []
      await timed(count, async () => void codes.push(await oneCode()))
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
async function launchOidcProvider(): Promise<Target> {
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

/** The measures, in the order run; a count of 0 (e.g. IDP_BENCH_CODES=0) leaves that one out. */
const MEASURES: Array<{ name: string; count: number; run: (target: Target) => Promise<Figures> }> = [
  { name: 'code exchange', count: CODES, run: codeExchanges },
  { name: 'refresh grant', count: REFRESH, run: refreshGrants },
  { name: 'cc Bearer', count: CLIENT_CREDENTIALS, run: clientCredentialsGrants },
  { name: 'cc DPoP', count: DPOP_CLIENT_CREDENTIALS, run: dpopClientCredentialsGrants },
].filter((m) => m.count > 0)

const row = (label: string, what: string, f: Figures) =>
  `${label.padEnd(26)}${what.padEnd(16)}${`${Math.round(f.perSecond)}/s`.padStart(8)}   p50 ${f.p50.toFixed(1).padStart(5)} ms   p99 ${f.p99.toFixed(1).padStart(6)} ms   cpu ${f.cpuMs.toFixed(2)} ms/req (generator ${f.generatorCpuMs.toFixed(2)})   (${f.count} in ${f.seconds.toFixed(1)} s${f.retries ? `, ${f.retries} nonce retries` : ''})`

console.log(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
)
console.log(
  `POST /token, ${CONCURRENCY} concurrent, client_secret_basic; ${CODES} code exchanges, ${REFRESH} refresh grants, ${CLIENT_CREDENTIALS} + ${DPOP_CLIENT_CREDENTIALS} client_credentials grants (cc) with Bearer and DPoP tokens`,
)
// every server is up for the whole run, and each measure is taken on one after the other, so that
// load from outside (a shared machine) falls on all of them alike
const targets: Target[] = []
const results = new Map<Target, Map<string, Figures>>()
try {
  for (const url of [undefined, ...(process.env.DATABASE_URL ? [process.env.DATABASE_URL] : [])])
    targets.push(await launchIdp(url))
  targets.push(await launchOidcProvider())
  for (const m of MEASURES)
    for (const target of targets) {
      const f = await m.run(target)
      results.set(target, (results.get(target) ?? new Map()).set(m.name, f))
      console.log(row(target.label, m.name, f))
    }
} finally {
  for (const target of targets) await target.stop()
}
const theirs = results.get(targets.at(-1)!)!
for (const target of targets.slice(0, -1))
  console.log(
    `ratio ${target.label} / oidc-provider: ${MEASURES.map((m) => `${m.name} ${(results.get(target)!.get(m.name)!.perSecond / theirs.get(m.name)!.perSecond).toFixed(2)}`).join(', ')}`,
  )
closeConnections()
