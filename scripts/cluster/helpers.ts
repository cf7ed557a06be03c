/** What the cluster suite shares: signing in through the balancer, the idp's code flow, a light load. */
import { createHash, randomBytes } from 'node:crypto'
import { CookieJar } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { generateEd25519, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { signIn } from '../../services/rental/test/support/stack.ts'
import type { Cluster } from './cluster.ts'

/** The ledger's development writer token for the rental (the cluster runs in development). */
export const LEDGER_WRITER = 'dev-ledger-writer-rental'

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The whole console sign-in as the demo user, every hop through the balancer. */
export async function consoleSignIn(cluster: Cluster) {
  const stack = {
    idp: { url: cluster.urls.idp, ctx: { config: { demoPassword: cluster.devSecret('idp.demo-password') } } },
    rental: { url: cluster.urls.rental },
  }
  return signIn(stack as unknown as Parameters<typeof signIn>[0], new CookieJar(), { freshIdpSession: true })
}

export type Session = Awaited<ReturnType<typeof consoleSignIn>>

/** A console request with the session's cookie and CSRF token, to `base` (the balancer or an instance). */
export async function consoleCall(
  session: Session,
  base: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await session.jar.fetch(`${base}${path}`, {
    method,
    headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

/**
 * Hires the summariser and signs its SLA and escrow with a key made here (through `bases`, in
 * turn): an active engagement, and the signing function of its client key.
 */
export async function hireSummariser(session: Session, bases: string[]) {
  let agentDid = ''
  for (let i = 0; i < 100 && !agentDid; i++) {
    const jobs = (await consoleCall(session, bases[0]!, 'GET', '/api/jobs')).body.jobs as
      Array<{ id: string; agents: Array<{ did: string }> }> | undefined
    agentDid = jobs?.find((j) => j.id === 'job_summary')?.agents[0]?.did ?? ''
    if (!agentDid) await sleep(200)
  }
  if (!agentDid) throw new Error('the catalogue lists no summariser')
  const key = generateEd25519()
  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const hired = await consoleCall(session, bases[0]!, 'POST', '/api/engagements', {
    job_id: 'job_summary',
    agent_did: agentDid,
    client_did: didKeyFromEd25519(key.publicKey),
  })
  if (hired.status !== 200) throw new Error(`hire: ${hired.status} ${JSON.stringify(hired.body)}`)
  const pkg = hired.body.package as {
    sla: { body: unknown }
    escrows: Array<{ body: unknown; hash: string }>
  }
  const id = (hired.body.engagement as { id: string }).id
  const signed = await consoleCall(
    session,
    bases[bases.length - 1]!,
    'POST',
    `/api/engagements/${id}/signatures`,
    {
      sla_signature: sign(pkg.sla.body),
      escrow_signatures: pkg.escrows.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
    },
  )
  if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${JSON.stringify(signed.body)}`)
  return { id, sign }
}

const issuerKeys = generateEd25519()
const issuerDid = didKeyFromEd25519(issuerKeys.publicKey)

/** A receipt signed by a test issuer, unique by its subject. */
export function receipt(subject: string) {
  const body = {
    type: 'task.completed',
    v: 1,
    issuer: issuerDid,
    subject,
    issued_at: new Date().toISOString(),
    data: {},
  }
  return { receipt: body, signature: b64uEncode(signEd25519(issuerKeys.seed, canonicalBytes(body))) }
}

export interface Appended {
  index: number
  leaf_hash: string
  tree_size: number
  duplicate: boolean
}

export async function append(base: string, subject: string): Promise<Appended> {
  const res = await fetch(`${base}/v1/receipts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${LEDGER_WRITER}` },
    body: JSON.stringify(receipt(subject)),
  })
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`append ${subject} at ${base}: ${res.status} ${await res.text()}`)
  return (await res.json()) as Appended
}

export const pkce = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/**
 * The idp's authorization code flow with a browser whose every request goes to the next of
 * `bases` in turn (the instances themselves): answers the code from the redirect.
 */
export async function authorizeAcross(
  bases: string[],
  jar: CookieJar,
  query: Record<string, string>,
  redirectUri: string,
): Promise<string> {
  let turn = 0
  const next = () => bases[turn++ % bases.length]!
  let location = `/authorize?${new URLSearchParams(query)}`
  for (let hop = 0; hop < 10; hop++) {
    if (location.startsWith(redirectUri)) {
      const code = new URL(location).searchParams.get('code')
      if (!code) throw new Error(`no code in ${location}`)
      return code
    }
    const path = location.replace(/^https?:\/\/[^/]+/, '')
    const res = await jar.fetch(`${next()}${path}`)
    const to = res.headers.get('location')
    if (!to) throw new Error(`${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`)
    location = to
  }
  throw new Error('too many redirects')
}

export interface LoadResult {
  requests: number
  failures: string[]
}

/**
 * A light, steady load through the balancer (a few requests at a time, every service, reads and
 * ledger appends) until stopped: every answer other than the expected one is a failure.
 */
export function lightLoad(
  cluster: Cluster,
  options: { jar: CookieJar; adminToken: string; clientId: string; appended: Map<string, Appended> },
) {
  const result: LoadResult = { requests: 0, failures: [] }
  let running = true
  let seq = 0
  const kinds: Array<() => Promise<void>> = [
    async () => {
      const res = await options.jar.fetch(`${cluster.urls.rental}/api/me`)
      if (res.status !== 200) throw new Error(`rental /api/me ${res.status} ${await res.text()}`)
    },
    async () => {
      const res = await fetch(`${cluster.urls.idp}/manage/v1/clients/${options.clientId}`, {
        headers: { 'x-admin-token': options.adminToken },
      })
      if (res.status !== 200) throw new Error(`idp client ${res.status} ${await res.text()}`)
    },
    async () => {
      const subject = `load-${process.pid}-${seq++}-${randomBytes(4).toString('hex')}`
      options.appended.set(subject, await append(cluster.urls.ledger, subject))
    },
    async () => {
      const res = await fetch(`${cluster.urls.ledger}/checkpoint`)
      if (res.status !== 200) throw new Error(`ledger /checkpoint ${res.status} ${await res.text()}`)
    },
    async () => {
      const res = await fetch(`${cluster.urls.agents}/agents`)
      if (res.status !== 200) throw new Error(`agents /agents ${res.status} ${await res.text()}`)
    },
  ]
  const worker = async (offset: number) => {
    for (let i = offset; running; i++) {
      result.requests++
      try {
        await kinds[i % kinds.length]!()
      } catch (err) {
        result.failures.push(`${new Date().toISOString()} ${(err as Error).message.slice(0, 100)}`)
      }
      await sleep(40)
    }
  }
  const workers = [0, 1, 2].map(worker)
  return {
    result,
    async stop() {
      running = false
      await Promise.all(workers)
      return result
    },
  }
}
