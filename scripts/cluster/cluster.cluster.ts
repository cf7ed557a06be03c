/**
 * The cluster suite (`npm run test:cluster`): two instances of every service on one PostgreSQL
 * and one Redis behind nginx, checked for what several instances must keep: sessions, codes and
 * refresh tokens valid on every instance, replays refused on every instance, one ledger tree,
 * and no failed request through a rolling restart or a kill -9.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { b64Decode } from '@svc/trust/base64url'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { verifyConsistency } from '@svc/trust/merkle'
import { openNote, verifierFromKey } from '@svc/trust/note'
import type { SERVICE_NAMES } from '../../packages/kit/src/topology.ts'
import { type Cluster, FAIL_TIMEOUT_S, startCluster } from './cluster.ts'
import {
  type Appended,
  append,
  authorizeAcross,
  consoleCall,
  consoleSignIn,
  hireSummariser,
  lightLoad,
  pkce,
  sleep,
} from './helpers.ts'

const REDIRECT = 'http://127.0.0.1:9/cb'

describe('two instances of each service behind nginx', () => {
  let cluster: Cluster
  let adminToken: string
  let console_: Awaited<ReturnType<typeof consoleSignIn>>
  let client: { id: string; secret: string }
  const appended = new Map<string, Appended>()
  const at = (service: (typeof SERVICE_NAMES)[number], index: number) => cluster.instance(service, index).url

  before(async () => {
    cluster = await startCluster({
      databaseUrl: process.env.DATABASE_URL!,
      redisUrl: process.env.CLUSTER_REDIS_URL!,
      schemaPrefix: `c${Date.now().toString(36)}_`,
      dropSchemas: true,
      shutdownDelayMs: 500,
    })
    adminToken = cluster.devSecret('idp.admin-token')
    const created = await fetch(`${at('idp', 0)}/manage/v1/clients`, {
      method: 'POST',
      headers: { 'x-admin-token': adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'Cluster test',
        client_type: 'confidential',
        first_party: true,
        redirect_uris: [REDIRECT],
      }),
    })
    const body = (await created.json()) as { client_id: string; client_secret: string }
    assert.equal(created.status, 201, JSON.stringify(body))
    client = { id: body.client_id, secret: body.client_secret }
  })
  after(async () => cluster?.stop())

  it('a console session made through the balancer works on each rental instance, and ends on both', async () => {
    console_ = await consoleSignIn(cluster)
    for (const index of [0, 1]) {
      const me = await console_.jar.fetch(`${at('rental', index)}/api/me`)
      assert.equal(me.status, 200)
      assert.equal(
        ((await me.json()) as { client: { subject: string } }).client.subject,
        console_.me.client.subject,
      )
      // a write with the session's CSRF token, on each instance
      const issued = await console_.jar.fetch(`${at('rental', index)}/api/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': console_.csrf },
        body: JSON.stringify({ label: `cluster ${index}` }),
      })
      assert.equal(issued.status, 201, await issued.text())
    }
    const other = await consoleSignIn(cluster)
    const out = await other.jar.fetch(`${at('rental', 0)}/auth/logout`, {
      method: 'POST',
      headers: { 'x-csrf-token': other.csrf },
    })
    assert.equal(out.status, 200)
    assert.equal((await other.jar.fetch(`${at('rental', 1)}/api/me`)).status, 401)
  })

  it('an idp code and refresh token work on either instance; their replays are refused on the other', async () => {
    const { verifier, challenge } = pkce()
    const code = await authorizeAcross(
      [at('idp', 1), at('idp', 0)],
      console_.jar,
      {
        response_type: 'code',
        client_id: client.id,
        redirect_uri: REDIRECT,
        scope: 'openid offline_access',
        state: randomBytes(8).toString('hex'),
        code_challenge: challenge,
        code_challenge_method: 'S256',
      },
      REDIRECT,
    )
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`
    const token = (base: string, form: Record<string, string>) =>
      fetch(`${base}/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      })
    const exchange = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    }
    const first = await token(at('idp', 0), exchange)
    const tokens = (await first.json()) as { access_token: string; refresh_token: string }
    assert.equal(first.status, 200, JSON.stringify(tokens))

    const refreshed = await token(at('idp', 1), {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    const fresh = (await refreshed.json()) as { access_token: string; refresh_token: string }
    assert.equal(refreshed.status, 200, JSON.stringify(fresh))
    const userinfo = await fetch(`${at('idp', 0)}/userinfo`, {
      headers: { authorization: `Bearer ${fresh.access_token}` },
    })
    assert.equal(userinfo.status, 200)
    const reused = await token(at('idp', 0), {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    })
    assert.equal(reused.status, 400, 'a rotated refresh token is refused on the other instance')

    const replayed = await token(at('idp', 1), exchange)
    assert.equal(replayed.status, 400, 'a code used on one instance is refused on the other')
    assert.equal(((await replayed.json()) as { error: string }).error, 'invalid_grant')
  })

  it('a rate limit is counted once across the instances (Redis)', async () => {
    // a fixed one-minute window: not across its end
    if (Date.now() % 60_000 > 57_000) await sleep(61_000 - (Date.now() % 60_000))
    const did = 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK'
    const remaining: number[] = []
    let refused = 0
    for (let i = 0; i < 40 && refused < 2; i++) {
      const res = await fetch(`${at('idp', i % 2)}/agents/${did}/profile.json`)
      await res.arrayBuffer()
      if (res.status === 429) refused++
      else remaining.push(Number(res.headers.get('ratelimit-remaining')))
    }
    assert.equal(refused, 2, 'both instances refuse once the shared count is over')
    for (let i = 1; i < remaining.length; i++)
      assert.ok(remaining[i]! < remaining[i - 1]!, `one count across instances: ${remaining.join(',')}`)
  })

  it('the ledger on two instances appending at once: one tree, consistent checkpoints, every receipt kept', async () => {
    const verifierKey = (
      (await (await fetch(`${at('ledger', 0)}/v1/key`)).json()) as { verifier_key: string }
    ).verifier_key
    const verifier = verifierFromKey(verifierKey)
    const seen = new Map<number, string>() // size -> root (base64)
    const observe = async (base: string) => {
      const { size, rootHash } = parseCheckpoint(
        openNote(await (await fetch(`${base}/checkpoint`)).text(), [verifier]).text,
      )
      const root = Buffer.from(rootHash).toString('base64')
      const known = seen.get(size)
      assert.ok(known === undefined || known === root, `two roots for size ${size}: a fork`)
      seen.set(size, root)
    }
    const acked: Array<[string, Appended]> = []
    const writer = async (index: number, worker: number, round: number) => {
      for (let i = 0; i < 8; i++) {
        const subject = `concurrent-${round}-${index}-${worker}-${i}-${randomBytes(3).toString('hex')}`
        acked.push([subject, await append(at('ledger', index), subject)])
      }
    }
    const observeBoth = () => Promise.all([observe(at('ledger', 0)), observe(at('ledger', 1))])
    // a non-empty tree first, then two rounds of eight writers (four per instance), observed
    // between the rounds and, as it goes, by a watcher: at least three checkpoints to compare
    acked.push(['seed', await append(at('ledger', 0), `seed-${randomBytes(6).toString('hex')}`)])
    await observeBoth()
    let appending = true
    const watcher = (async () => {
      while (appending) {
        await observeBoth()
        await sleep(20)
      }
    })()
    for (const round of [1, 2]) {
      await Promise.all([0, 1].flatMap((index) => [0, 1, 2, 3].map((w) => writer(index, w, round))))
      await observeBoth()
    }
    appending = false
    await watcher

    const indexes = new Set(acked.map(([, a]) => a.index))
    assert.equal(indexes.size, acked.length, 'every acknowledged receipt has its own index')
    for (const [subject, a] of acked) {
      const entry = (await (await fetch(`${at('ledger', a.index % 2)}/v1/entries/${a.index}`)).json()) as {
        leaf_hash: string
      }
      assert.equal(entry.leaf_hash, a.leaf_hash, `${subject} is at its index`)
    }
    const sizes = [...seen.keys()].sort((a, b) => a - b).filter((s) => s > 0)
    assert.ok(sizes.length >= 3, `checkpoints observed: ${sizes.join(',')}`)
    for (let i = 1; i < sizes.length; i++) {
      const [from, to] = [sizes[i - 1]!, sizes[i]!]
      const proof = (await (
        await fetch(`${at('ledger', i % 2)}/v1/proofs/consistency?from=${from}&to=${to}`)
      ).json()) as {
        proof: string[]
      }
      assert.ok(
        verifyConsistency(
          from,
          to,
          b64Decode(seen.get(from)!),
          b64Decode(seen.get(to)!),
          proof.proof.map(b64Decode),
        ),
        `checkpoint ${to} is consistent with ${from}`,
      )
    }
  })

  it('a task run through the balancer, then its release sent to both rental instances at once: paid once', async () => {
    const call = (base: string, method: string, path: string, body?: unknown) =>
      consoleCall(console_, base, method, path, body)
    const lb = cluster.urls.rental
    const { id, sign } = await hireSummariser(console_, [lb, at('rental', 1)])
    const task = await call(at('rental', 0), 'POST', '/api/tasks', {
      engagement_id: id,
      text: 'Two instances share one job queue. The ledger keeps one tree. A release is paid once.',
    })
    assert.ok(task.status === 200 || task.status === 202, JSON.stringify(task.body))
    // a sync task past RENTAL_TASK_TIMEOUT_MS (a loaded machine) carries on asynchronously
    const taskId = (task.body.task as { id: string }).id
    let state = ''
    for (let i = 0; i < 300 && state !== 'completed'; i++) {
      state = (await call(lb, 'GET', `/api/tasks/${taskId}`)).body.state as string
      if (state !== 'completed') await sleep(200)
    }
    assert.equal(state, 'completed')

    const pending = (await call(at('rental', 1), 'GET', `/api/engagements/${id}/releases/pending`)).body
      .releases as Array<{ escrow: { hash: string }; instruction: unknown }>
    assert.equal(pending.length, 1)
    const release = {
      escrow_hash: pending[0]!.escrow.hash,
      instruction: { body: pending[0]!.instruction, signature: sign(pending[0]!.instruction) },
    }
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(at('rental', i % 2), 'POST', `/api/engagements/${id}/releases`, release),
      ),
    )
    for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body))
    assert.equal(new Set(answers.map((a) => (a.body.transfer as { id: string }).id)).size, 1, 'one transfer')
    for (const index of [0, 1]) {
      const left = await call(at('rental', index), 'GET', `/api/engagements/${id}/releases/pending`)
      assert.deepEqual(left.body.releases, [])
    }
  })

  it('a rolling restart (SIGTERM, each instance in turn) under light load: no request fails', async () => {
    const load = lightLoad(cluster, { jar: console_.jar, adminToken, clientId: client.id, appended })
    await sleep(500)
    // each service's instances in turn, the four services side by side
    for (const index of [0, 1]) {
      await Promise.all(
        (['idp', 'ledger', 'rental', 'agents'] as const).map(async (service) => {
          const instance = cluster.instance(service, index)
          instance.process.kill('SIGTERM')
          assert.equal(await instance.exited, 0, `${service}#${index + 1} stopped cleanly`)
          await cluster.restart(instance)
        }),
      )
      // nginx left each out for FAIL_TIMEOUT_S after its refused connections: stopping the other
      // meanwhile would leave none (passive checks only), as it would in production
      await sleep(FAIL_TIMEOUT_S * 1000 + 500)
    }
    const result = await load.stop()
    assert.deepEqual(
      result.failures.slice(0, 10),
      [],
      `${result.failures.length} of ${result.requests} requests failed`,
    )
    assert.ok(result.requests > 100, `${result.requests} requests`)
  })

  it('kill -9 of a ledger and a rental instance under light load: no request fails, nothing lost or doubled', async () => {
    const load = lightLoad(cluster, { jar: console_.jar, adminToken, clientId: client.id, appended })
    await sleep(1_000)
    const killed = [cluster.instance('ledger', 0), cluster.instance('rental', 1)]
    for (const instance of killed) instance.process.kill('SIGKILL')
    await Promise.all(killed.map((i) => i.exited))
    await sleep(2_000)
    for (const instance of killed) await cluster.restart(instance)
    await sleep(1_000)
    const result = await load.stop()
    assert.deepEqual(
      result.failures.slice(0, 10),
      [],
      `${result.failures.length} of ${result.requests} requests failed`,
    )

    // every acknowledged append is in the tree, once, at its index: the whole tree is read
    const size = Number((await (await fetch(`${cluster.urls.ledger}/checkpoint`)).text()).split('\n')[1])
    const counts = new Map<string, number>()
    for (let start = 0; start < size; start += 32)
      await Promise.all(
        Array.from({ length: Math.min(32, size - start) }, async (_, k) => {
          const entry = (await (await fetch(`${cluster.urls.ledger}/v1/entries/${start + k}`)).json()) as {
            leaf_hash: string
          }
          counts.set(entry.leaf_hash, (counts.get(entry.leaf_hash) ?? 0) + 1)
        }),
      )
    for (const [subject, a] of appended) {
      assert.equal(counts.get(a.leaf_hash), 1, `${subject} is in the tree once`)
      const entry = (await (await fetch(`${cluster.urls.ledger}/v1/entries/${a.index}`)).json()) as {
        leaf_hash: string
      }
      assert.equal(entry.leaf_hash, a.leaf_hash, `${subject} is at its index`)
    }
    assert.ok(appended.size > 20, `${appended.size} appends under load`)
  })
})
