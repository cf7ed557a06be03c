import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { chromiumPath, launchChromium, NO_CHROMIUM } from '@svc/testing/chromium'
import { fileURLToPath } from 'node:url'
import { b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { build } from 'esbuild'
import { generateKeyPair } from 'oauth4webapi'
import type { Browser } from 'playwright-core'
import { DEMO_EMAIL } from '../../../services/idp/src/areas/accounts/index.ts'
import { type FullStack, startFullStack } from '../../../services/rental/test/support/full-stack.ts'
import {
  ClientKey,
  type DPoPKeyPair,
  ok,
  type Send,
  signBody,
  signUnnamed,
  startDeviceSignIn,
  SvcClient,
  Session,
  SvcError,
  type TaskEvent,
  type TokenSet,
} from '../src/index.ts'
import { verifyBundle } from '../src/receipts.ts'
import { eventually } from '../../../services/rental/test/support/stack.ts'
import { answerOnPage } from './support.ts'

const executable = chromiumPath()
const INVOICE = ['Invoice INV-1042, Gulf Supplies LLC', '3 x Printer paper @ 25.00 AED = 75.00 AED'].join(
  '\n',
)

/** What a call throws, checked to be an SvcError. */
async function thrown(call: Promise<unknown>): Promise<SvcError> {
  try {
    await call
  } catch (err) {
    assert.ok(err instanceof SvcError, `not an SvcError: ${String(err)}`)
    return err
  }
  assert.fail('the call did not throw')
}

/** A way out that loses the answer of the next release it is told to (the write happened all the same). */
function lossy(inner: Send) {
  let dropNext = false
  const releases: Array<{ key: string; body: string }> = []
  const streams: string[] = []
  const send: Send = async (request) => {
    if (new URL(request.url).pathname.endsWith('/events'))
      streams.push(request.headers.get('last-event-id') ?? '')
    const body = request.method === 'POST' ? await request.clone().text() : ''
    const res = await inner(request)
    if (request.method === 'POST' && new URL(request.url).pathname.endsWith('/releases')) {
      releases.push({ key: request.headers.get('idempotency-key')!, body })
      if (dropNext) {
        dropNext = false
        throw new TypeError('fetch failed: the answer was lost')
      }
    }
    return res
  }
  return { send, releases, streams, dropNextRelease: () => void (dropNext = true) }
}

describe('@svc/client against the running stack', { skip: executable ? false : NO_CHROMIUM }, () => {
  let stack: FullStack
  let browser: Browser
  let agentDid: string

  before(async () => {
    // a stream ends after 1 s, and each task takes 2.5 s: the events come over several streams;
    // the device codes are polled every second rather than every 5 s (four sign-ins wait on it)
    stack = await startFullStack(
      { RENTAL_EVENTS_STREAM_S: '1' },
      { agentsEnv: { AGENTS_DELAY_MS: '2500' }, idpEnv: { IDP_DEVICE_INTERVAL_S: '1' } },
    )
    browser = await launchChromium(executable!)
    agentDid = await stack.agentOf('job_invoice_check')
  })
  after(async () => {
    await browser?.close()
    await stack?.close()
  })

  /** Signs in by the device grant, allowed in Chromium; every token set the session saw is in `seen`. */
  async function deviceSignIn(dpop?: DPoPKeyPair, options: { resource?: false } = {}) {
    const seen: TokenSet[] = []
    const started = await startDeviceSignIn({
      idp: stack.idp.url,
      ...(options.resource === false ? {} : { resource: stack.rental.url }),
      ...(dpop ? { dpop } : {}),
      onTokens: (tokens) => void seen.push(tokens),
    })
    assert.match(started.code.user_code, /^[A-Z]{4}-[A-Z]{4}$/)
    const waiting = started.wait()
    assert.match(
      await answerOnPage(browser, stack, started.code.verification_uri_complete!),
      /Device connected/,
    )
    return { session: await waiting, seen }
  }

  /** The main path through the SDK: hire, sign, tasks with their events, the receipt, a release paid once. */
  async function mainPath(client: SvcClient, key: ClientKey, way: ReturnType<typeof lossy>) {
    const job = (await client.jobs()).find((j) => j.id === 'job_invoice_check')!
    assert.ok(job.agents.some((a) => a.did === agentDid))
    const hired = await client.hire({ job_id: job.id, agent_did: agentDid })
    assert.equal(hired.engagement.state, 'active')
    assert.equal(hired.engagement.client_did, key.did)
    const engagement = hired.engagement.id

    // the first task is prepaid by the package's escrow; the second comes with its own escrow, signed
    const first = await client.runTask({ engagement_id: engagement, text: INVOICE })
    assert.equal(first.task.state, 'completed')
    const second = await client.runTask({ engagement_id: engagement, text: INVOICE, async: true })
    assert.equal(second.escrow?.state, 'offered')
    const events: TaskEvent[] = []
    for await (const event of client.events(second.task.id)) events.push(event)
    assert.deepEqual(
      events.map((e) => e.stream_seq),
      events.map((_, i) => i + 1),
    )
    // the task outlasts the stream's bound (1 s): the SDK came back with Last-Event-ID each time
    assert.ok(way.streams.length >= 2, `read in ${way.streams.length} stream(s)`)
    assert.equal(way.streams[0], '0')
    assert.ok(way.streams.slice(1).every((id) => Number(id) > 0))
    assert.equal(events[0]!.type, 'task.created')
    assert.deepEqual(events.at(-1)!.data.to, 'completed')
    // resuming after the second event gives the rest only (Last-Event-ID)
    const rest: number[] = []
    for await (const event of client.events(second.task.id, { after: 2 })) rest.push(event.stream_seq)
    assert.deepEqual(
      rest,
      events.slice(2).map((e) => e.stream_seq),
    )

    const verdict = await client.verifyReceipt(second.task.id)
    assert.deepEqual(
      verdict.checks.map((c) => `${c.ok ? 'ok' : 'FAIL'} ${c.check}`),
      [
        'ok format',
        'ok receipt signature',
        'ok receipt subject',
        'ok leaf hash',
        'ok log key',
        'ok checkpoint signature',
        'ok inclusion proof',
      ],
    )
    assert.equal(verdict.ok, true)
    // a receipt changed after it was signed fails, and says which check
    const tampered = structuredClone(verdict.bundle)
    ;(tampered.receipt as unknown as { data: { price_fils: number } }).data.price_fils += 1
    const refused = verifyBundle(tampered, { logKey: await client.ledgerKey() })
    assert.equal(refused.ok, false)
    assert.deepEqual(refused.checks.at(-1), {
      check: 'receipt signature',
      ok: false,
      detail: 'the signature does not verify',
    })
    // another log's key is refused at the checkpoint
    const otherLog = verifyBundle(verdict.bundle, { logKey: 'other+01234567+AQ' })
    assert.equal(otherLog.checks.at(-1)!.check, 'log key')
    assert.equal(otherLog.ok, false)

    // the release's answer is lost on the way back: the SDK sends it again with the same key
    const pending = await client.pending(engagement)
    assert.equal(pending.releases.length, 2)
    const escrowHash = pending.releases[0]!.escrow.hash
    way.dropNextRelease()
    const paid = await client.release(engagement, { escrowHash })
    assert.equal(way.releases.length, 2)
    assert.deepEqual(way.releases[0], way.releases[1], 'sent again as it was, with the same Idempotency-Key')
    // sent again later, by hand: the same request under its key answers the same transfer
    const sent = JSON.parse(way.releases[0]!.body) as {
      escrow_hash: string
      instruction: { body: Record<string, unknown>; signature: string }
    }
    const resend = (body: typeof sent, idempotencyKey: string) =>
      ok(
        client.api.POST('/api/engagements/{id}/releases', {
          params: { path: { id: engagement } },
          body,
          headers: { 'idempotency-key': idempotencyKey },
        }),
      )
    assert.equal((await resend(sent, way.releases[0]!.key)).transfer.id, paid.transfer.id)
    // and a fresh instruction for the released escrow, under a new key, pays nothing more
    const { instruction } = pending.releases[0]!
    const fresh = {
      escrow_hash: escrowHash,
      instruction: { body: instruction, signature: await signUnnamed(key, instruction) },
    }
    assert.equal((await resend(fresh, 'a-new-key')).transfer.id, paid.transfer.id)
    const escrows = (
      await ok(client.api.GET('/api/engagements/{id}', { params: { path: { id: engagement } } }))
    ).engagement.escrows
    const released = escrows.filter((e) => e.state === 'released')
    assert.deepEqual(
      released.map((e) => [e.hash, e.release_transfer_id]),
      [[escrowHash, paid.transfer.id]],
    )
    // the key with another request: refused, typed
    const other = pending.releases[1]!
    const reused = await thrown(
      ok(
        client.api.POST('/api/engagements/{id}/releases', {
          params: { path: { id: engagement } },
          body: {
            escrow_hash: other.escrow.hash,
            instruction: { body: other.instruction, signature: await signUnnamed(key, other.instruction) },
          },
          headers: { 'idempotency-key': way.releases[0]!.key },
        }),
      ),
    )
    assert.deepEqual([reused.code, reused.status], ['idempotency_key_reused', 409])
    // a prepared release sent twice: one transfer, and nothing is left to pay
    const prepared = await client.prepareRelease(engagement)
    assert.equal(prepared.escrow.hash, other.escrow.hash)
    const [one, two] = [await prepared.send(), await prepared.send()]
    assert.equal(one.transfer.id, two.transfer.id)
    assert.deepEqual((await client.pending(engagement)).releases, [])

    // errors are typed: the published code, the status, the message
    const noJob = await thrown(client.hire({ job_id: 'job_nope', agent_did: agentDid }))
    assert.deepEqual([noJob.code, noJob.status], ['job_not_found', 404])
    assert.ok(noJob.message.length > 0)
    const noEngagement = await thrown(client.runTask({ engagement_id: 'eng_nope', text: 'hello' }))
    assert.deepEqual([noEngagement.code, noEngagement.status], ['engagement_not_found', 404])
    // a body changed on its way is not signed
    const changed = await thrown(
      signBody(key, { body: { ...hired.package.sla.body, price_fils: 1 }, hash: hired.package.sla.hash }),
    )
    assert.equal(changed.code, 'hash_mismatch')
    return engagement
  }

  it('signs in as svc-cli by the device grant allowed in Chromium; with its Bearer token: the main path', async () => {
    const { session, seen } = await deviceSignIn()
    assert.equal(session.dpopBound, false)
    assert.ok(session.tokens.refresh_token)
    const key = await ClientKey.generate()
    const way = lossy(session.fetch)
    const client = new SvcClient({ rental: stack.rental.url, ledger: stack.ledger.url, send: way.send, key })
    const me = await client.me()
    assert.equal(me.organization.id, stack.alice.me.organization.id)
    await mainPath(client, key, way)

    // the access token revoked at the idp: the rental says 401 invalid_token, the SDK refreshes and goes on
    const revoked = session.tokens.access_token
    const revocation = await fetch(`${stack.idp.url}/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: revoked, client_id: 'svc-cli' }).toString(),
    })
    assert.equal(revocation.status, 200)
    await eventually('the rental refuses the revoked token', async () => {
      const res = await fetch(`${stack.rental.url}/api/me`, {
        headers: { authorization: `Bearer ${revoked}` },
      })
      return res.status === 401
    })
    assert.equal((await client.me()).organization.id, me.organization.id)
    assert.notEqual(session.tokens.access_token, revoked)

    // a refresh rotates the refresh token; the SDK goes on with the new access token
    const before = session.tokens
    const refreshed = await session.refresh()
    assert.notEqual(refreshed.access_token, before.access_token)
    assert.notEqual(refreshed.refresh_token, before.refresh_token)
    assert.deepEqual(seen.at(-1), refreshed)
    assert.equal((await client.me()).organization.id, me.organization.id)
    // the rotated-out refresh token is refused, typed as the idp's OAuth error (and ends the family)
    const replayed = await thrown(
      Session.resume({ idp: stack.idp.url, tokens: before }).then((s) => s.refresh()),
    )
    assert.equal(replayed.code, 'invalid_grant')
  })

  it('with a DPoP-bound token: the same path, every request with a fresh proof of the key', async () => {
    const { session } = await deviceSignIn(await generateKeyPair('ES256'))
    assert.equal(session.dpopBound, true)
    const key = await ClientKey.generate()
    const way = lossy(session.fetch)
    const client = new SvcClient({ rental: stack.rental.url, ledger: stack.ledger.url, send: way.send, key })
    await mainPath(client, key, way)
    // the token alone, as a Bearer token, is refused: typed, and the SDK did not send it that way
    const res = await fetch(`${stack.rental.url}/api/me`, {
      headers: { authorization: `Bearer ${session.tokens.access_token}` },
    })
    assert.equal(res.status, 401)
  })

  it('refuses a token for another audience with a typed error (unauthenticated, 401)', async () => {
    const { session } = await deviceSignIn(undefined, { resource: false })
    const client = new SvcClient({ rental: stack.rental.url, ledger: stack.ledger.url, session })
    const refused = await thrown(client.me())
    assert.deepEqual([refused.code, refused.status], ['unauthenticated', 401])
  })

  it('denied on the page: access_denied', async () => {
    const started = await startDeviceSignIn({ idp: stack.idp.url, resource: stack.rental.url })
    const waiting = thrown(started.wait())
    await answerOnPage(browser, stack, started.code.verification_uri_complete!, 'Deny')
    assert.equal((await waiting).code, 'access_denied')
  })

  it('runs in a browser: the bundle has no Node module outside the receipt checks; keys and signing work there', async () => {
    const entryPoints = [fileURLToPath(new URL('../src/index.ts', import.meta.url))]
    const common = {
      entryPoints,
      bundle: true,
      platform: 'browser' as const,
      external: ['node:*'],
      write: false,
    }
    // split as a web app would ship it: Node's modules only in the chunk of the receipt checks, loaded on use
    const split = await build({
      ...common,
      format: 'esm',
      splitting: true,
      outdir: 'out',
      logLevel: 'silent',
    })
    const withNode = split
      .outputFiles!.filter((f) => /from "node:|import\("node:/.test(f.text))
      .map((f) => f.path)
    assert.equal(withNode.length, 1, withNode.join())
    assert.match(withNode[0]!, /\/receipts-[^/]+\.js$/)
    const code = (await build({ ...common, format: 'iife', globalName: 'svc', logLevel: 'silent' }))
      .outputFiles![0]!.text
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      // a page of its own on a loopback origin (a secure context, as WebCrypto asks)
      const PAGE = 'http://127.0.0.1:9/sdk.html'
      await page.route(PAGE, (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>sdk</title>' }),
      )
      await page.goto(PAGE)
      await page.addScriptTag({ content: code })
      const seen = (await page.evaluate(`(async () => {
        const key = await svc.ClientKey.generate()
        const body = { type: 'svc.escrow', v: 1, amount_fils: 1500 }
        const signature = await svc.signBody(key, { body, hash: await svc.bodyHash(body) })
        const file = await key.backup('a long passphrase kept apart')
        const again = await svc.ClientKey.restore(file, 'a long passphrase kept apart')
        let refused = ''
        try { await svc.signBody(key, { body: { ...body, amount_fils: 1 }, hash: await svc.bodyHash(body) }) }
        catch (err) { refused = err.code }
        return { did: key.did, restored: again.did, signature, refused }
      })()`)) as { did: string; restored: string; signature: string; refused: string }
      assert.equal(seen.restored, seen.did)
      assert.equal(seen.refused, 'hash_mismatch')
      const body = { type: 'svc.escrow', v: 1, amount_fils: 1500 }
      assert.ok(verifyEd25519(ed25519FromDidKey(seen.did), canonicalBytes(body), b64uDecode(seen.signature)))
    } finally {
      await context.close()
    }
  })

  it('restores a key the web console backed up, and the console restores one the SDK backed up', async () => {
    const PASSPHRASE = 'a long passphrase kept apart'
    const context = await browser.newContext()
    try {
      const page = await context.newPage()
      page.setDefaultTimeout(10_000)
      await page.goto(`${stack.rental.url}/console`)
      await page.waitForURL(/\/ui\/login/)
      await page.fill('#email', DEMO_EMAIL)
      await page.fill('#password', stack.idp.ctx.config.demoPassword)
      await page.click('button[type=submit]')
      await page.waitForURL(`${stack.rental.url}/console`)
      // the console's own code makes the key and its backup file
      const made = (await page.evaluate(`import('/console/assets/key-backup.js').then(async (b) => {
        // the file as the download link would give it (the page's CSP lets no fetch read a blob: URL)
        let blob
        URL.createObjectURL = (made) => ((blob = made), 'blob:kept')
        const made = await b.makeKeyWithBackup(${JSON.stringify(PASSPHRASE)})
        return { did: made.did, file: await blob.text() }
      })`)) as { did: string; file: string }
      const restored = await ClientKey.restore(made.file, PASSPHRASE)
      assert.equal(restored.did, made.did)

      // and back: the SDK's backup restored by the console, which then signs as that did:key
      const key = await ClientKey.generate()
      const signed =
        (await page.evaluate(`Promise.all([import('/console/assets/key-backup.js'), import('/console/assets/keys.js')]).then(async ([b, keys]) => {
        const did = await b.restoreKey(${JSON.stringify(await key.backup(PASSPHRASE))}, ${JSON.stringify(PASSPHRASE)})
        const current = await keys.currentKey()
        return { did, current: current.did, signature: await keys.signBody(current, { check: 'restored' }) }
      })`)) as { did: string; current: string; signature: string }
      assert.deepEqual([signed.did, signed.current], [key.did, key.did])
      assert.ok(
        verifyEd25519(key.publicKey, canonicalBytes({ check: 'restored' }), b64uDecode(signed.signature)),
      )
    } finally {
      await context.close()
    }
  })
})
