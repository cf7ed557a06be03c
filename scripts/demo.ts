/**
 * `npm run demo`: the whole main path from the command line, against the services `npm start`
 * runs: sign in as the demo user, hire an agent, sign the SLA and the escrow with a key made here,
 * run a task, check its receipt's inclusion offline, and release the payment (twice: it pays once).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CookieJar } from '../packages/kit/src/testing.ts'
import { readTopology } from '../packages/kit/src/topology.ts'
import { b64uEncode } from '../packages/trust/src/base64url.ts'
import { type ReceiptBundle, verifyReceiptBundle } from '../packages/trust/src/bundle.ts'
import { didKeyFromEd25519 } from '../packages/trust/src/did-key.ts'
import { generateEd25519, signEd25519 } from '../packages/trust/src/ed25519.ts'
import { canonicalBytes } from '../packages/trust/src/jcs.ts'

const urls = readTopology()
const dataDir = process.env.DATA_DIR ?? '.data'
const email = process.env.DEMO_EMAIL ?? 'demo@svc.local'
const jar = new CookieJar()
let csrf = ''

function step(title: string, detail?: unknown) {
  console.log(`\n== ${title}`)
  if (detail !== undefined) console.log(typeof detail === 'string' ? detail : JSON.stringify(detail, null, 2))
}

async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await jar.fetch(`${urls.rental.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(csrf ? { 'x-csrf-token': csrf } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const answer = (await res.json()) as T
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(answer)}`)
  return answer
}

/** The code flow as a browser would go through it, filling in the idp's sign-in form. */
async function signIn() {
  const password =
    process.env.DEMO_PASSWORD ?? readFileSync(join(dataDir, 'idp.demo-password'), 'utf8').trim()
  let res = await jar.fetch(`${urls.rental.url}/auth/login`)
  for (let hop = 0; hop < 10 && res.status >= 300 && res.status < 400; hop++) {
    const location = new URL(res.headers.get('location')!, urls.idp.url).toString()
    res = await jar.fetch(location)
    if (res.status === 200 && new URL(location).pathname === '/ui/login') {
      const page = await res.text()
      const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? ''
      res = await jar.fetch(`${urls.idp.url}/ui/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          email,
          password,
          csrf: field('csrf'),
          return_to: field('return_to').replaceAll('&amp;', '&'),
        }).toString(),
      })
    }
  }
  const me = await call<{
    csrf_token: string
    client: { subject: string; email?: string }
    organization: { id: string; role: string }
  }>('GET', '/api/me')
  csrf = me.csrf_token
  return me
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, seconds = 30): Promise<T> {
  const deadline = Date.now() + seconds * 1000
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`)
    await new Promise((r) => setTimeout(r, 300))
  }
}

interface Signed {
  body: Record<string, unknown>
  hash: string
}

async function main() {
  const me = await signIn()
  step('1. signed in at the rental through the idp', {
    subject: me.client.subject,
    email: me.client.email,
    organization: me.organization.id,
    role: me.organization.role,
  })

  const { jobs } = await call<{
    jobs: Array<{
      id: string
      title: string
      price_fils: number
      agents: Array<{ did: string; name: string }>
    }>
  }>('GET', '/api/jobs')
  const job = await until('a job with an agent (is the agents service up?)', async () => {
    const served = jobs.filter((j) => j.agents.length > 0)
    return served.find((j) => /invoice/i.test(j.title)) ?? served[0]
  })
  const agent = job.agents[0]!
  step(
    '2. the catalogue',
    `${jobs.length} jobs; hiring ${agent.name} (${agent.did}) for "${job.title}" at ${job.price_fils / 100} AED a task`,
  )

  const key = generateEd25519()
  const clientDid = didKeyFromEd25519(key.publicKey)
  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const hired = await call<{
    engagement: { id: string; state: string }
    package: { sla: Signed; escrows: Signed[] }
  }>('POST', '/api/engagements', { job_id: job.id, agent_did: agent.did, client_did: clientDid })
  step('3. hired: a pending engagement and the package to sign', {
    engagement: { id: hired.engagement.id, state: hired.engagement.state },
    client_did: clientDid,
    sla_hash: hired.package.sla.hash,
    escrows: hired.package.escrows.map((e) => e.hash),
  })

  const signed = await call<{ engagement: { state: string } }>(
    'POST',
    `/api/engagements/${hired.engagement.id}/signatures`,
    {
      sla_signature: sign(hired.package.sla.body),
      escrow_signatures: hired.package.escrows.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
    },
  )
  step(
    '4. signed the SLA and the escrow with the client key (JCS, Ed25519)',
    `the engagement is ${signed.engagement.state}`,
  )

  const text = [
    'Invoice INV-1042, Gulf Supplies LLC',
    '3 x Printer paper @ 25.00 AED = 75.00 AED',
    '2 x Toner cartridge @ 180.00 AED = 360.00 AED',
    'Subtotal: 435.00 AED',
    'VAT (5%): 21.75 AED',
    'Total: 465.75 AED',
  ].join('\n')
  const created = await call<{ task: { id: string; state: string; output: { text: string } | null } }>(
    'POST',
    '/api/tasks',
    {
      engagement_id: hired.engagement.id,
      text,
    },
  )
  step('5. ran a task over A2A', {
    id: created.task.id,
    state: created.task.state,
    output: created.task.output?.text,
  })

  const task = await until('the receipt on the ledger', async () => {
    const t = await call<{ receipt: { leaf_hash: string; ledger_index: number | null } | null }>(
      'GET',
      `/api/tasks/${created.task.id}`,
    )
    return t.receipt && t.receipt.ledger_index !== null ? t : undefined
  })
  const index = task.receipt!.ledger_index!
  const bundle = (await (
    await fetch(`${urls.ledger.url}/v1/entries/${index}/bundle`)
  ).json()) as ReceiptBundle
  const logKey = ((await (await fetch(`${urls.ledger.url}/v1/key`)).json()) as { verifier_key: string })
    .verifier_key
  const verdict = verifyReceiptBundle(bundle, logKey)
  step(
    `6. the receipt is leaf ${index} of the ledger; checked offline against the log key`,
    verdict.checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'} ${c.check}`).join('\n'),
  )
  if (!verdict.ok) throw new Error('the receipt did not verify')

  const pending = await call<{ releases: Array<{ escrow: Signed; instruction: Record<string, unknown> }> }>(
    'GET',
    `/api/engagements/${hired.engagement.id}/releases/pending`,
  )
  const release = pending.releases[0]!
  const request = {
    escrow_hash: release.escrow.hash,
    instruction: { body: release.instruction, signature: sign(release.instruction) },
  }
  const first = await call<{ transfer: { id: string } }>(
    'POST',
    `/api/engagements/${hired.engagement.id}/releases`,
    request,
  )
  const again = await call<{ transfer: { id: string } }>(
    'POST',
    `/api/engagements/${hired.engagement.id}/releases`,
    request,
  )
  step('7. released the payment, and sent the release again: one transfer', {
    first: first.transfer.id,
    again: again.transfer.id,
    paid_once: first.transfer.id === again.transfer.id,
    postings: (first.transfer as unknown as { postings: unknown }).postings,
  })

  const followed = await call<{ task: { id: string } }>('POST', '/api/tasks', {
    engagement_id: hired.engagement.id,
    text,
    async: true,
  })
  step(
    `8. followed the events of an async task (GET /api/tasks/${followed.task.id}/events, server-sent events)`,
  )
  await followEvents(followed.task.id)
}

/**
 * Reads a task's event stream until the task ends, printing each event; a stream that ends at its
 * bound (RENTAL_EVENTS_STREAM_S) is read again after the last event seen (`Last-Event-ID`).
 */
async function followEvents(taskId: string) {
  let last = '0'
  for (let ended = false; !ended;) {
    const res = await jar.fetch(`${urls.rental.url}/api/tasks/${taskId}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': last },
    })
    if (res.status === 204) return
    if (res.status !== 200) throw new Error(`events: ${res.status} ${await res.text()}`)
    let buffer = ''
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      buffer += chunk
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (!data) continue
        const event = JSON.parse(data) as {
          stream_seq: number
          type: string
          actor: { type: string }
          data: Record<string, unknown>
        }
        last = String(event.stream_seq)
        const { from, to, attempt, agent_state, error, receipt_id } = event.data
        const what =
          event.type === 'task.state_changed'
            ? `${String(from)} → ${String(to)}${receipt_id ? ` (receipt ${String(receipt_id)})` : ''}`
            : [attempt && `attempt ${String(attempt)}`, agent_state, error].filter(Boolean).join(', ')
        console.log(`id: ${last}  ${event.type.padEnd(18)} by ${event.actor.type.padEnd(6)} ${what}`)
        if (event.type === 'task.state_changed' && ['completed', 'failed', 'canceled'].includes(String(to)))
          ended = true
      }
    }
  }
}

main().catch((err: Error) => {
  console.error(`\ndemo failed: ${err.message}\n(is \`npm start\` running? the demo uses its demo account)`)
  process.exit(1)
})
