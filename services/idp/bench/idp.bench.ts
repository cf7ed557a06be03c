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
 * Each server runs in a child process (targets.ts), up for the whole run, and gets the same requests from the
 * same load generator: node:http with keep-alive, IDP_BENCH_CONCURRENCY workers (16),
 * client_secret_basic. Each measure is taken on every server in turn before the next one.
 * Our codes come from the real flow (one sign-in, then /authorize, which a first-party client
 * passes without consent); oidc-provider's are minted inside its process (oidc-provider-server.ts).
 * Counts: IDP_BENCH_CODES (3,000), IDP_BENCH_REFRESH (5,000), IDP_BENCH_CC (20,000 Bearer),
 * IDP_BENCH_CC_DPOP (as IDP_BENCH_CC); 0 leaves that measure out. IDP_BENCH_NODE_ARGS passes
 * flags to both servers (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"). IDP_BENCH_BASELINE=<a checkout
 * of this repository> (a git worktree, its node_modules linked to this one's) also runs that
 * checkout's idp on each database, interleaved with ours, for an A/B of a change on the same load.
 */
import { randomBytes } from 'node:crypto'
import { cpus, totalmem } from 'node:os'
import { exportJWK, generateKeyPair, SignJWT } from 'jose'
import { type Answer, closeConnections, cpuSeconds, send } from '../../../bench/load.ts'
import { launchIdp, launchOidcProvider, REDIRECT_URI, type Target } from './targets.ts'

const CODES = Number(process.env.IDP_BENCH_CODES ?? 3000)
const REFRESH = Number(process.env.IDP_BENCH_REFRESH ?? 5000)
const CLIENT_CREDENTIALS = Number(process.env.IDP_BENCH_CC ?? 20_000)
const DPOP_CLIENT_CREDENTIALS = Number(process.env.IDP_BENCH_CC_DPOP ?? CLIENT_CREDENTIALS)
const CONCURRENCY = Number(process.env.IDP_BENCH_CONCURRENCY ?? 16)
const baseline = process.env.IDP_BENCH_BASELINE
// codes live 60 s on both servers: they are made and exchanged in rounds well within that
const ROUND = 1000
const WARMUP = 200

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
  for (const url of [undefined, ...(process.env.DATABASE_URL ? [process.env.DATABASE_URL] : [])]) {
    targets.push(await launchIdp(url))
    if (baseline) targets.push(await launchIdp(url, baseline))
  }
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
