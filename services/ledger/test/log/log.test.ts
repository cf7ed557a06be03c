import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { b64Decode } from '@svc/trust/base64url'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash, rootFromLeafHashes, verifyConsistency, verifyInclusion } from '@svc/trust/merkle'
import { openNote, parseNote, signNote, verifierFromKey } from '@svc/trust/note'
import { decodeEntryBundle } from '@svc/trust/tiles'
import { cosignatureVerifierFromKey, cosignerFromKey, generateCosignerKey } from '@svc/trust/cosignature'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'
import { append, newIssuer, signedReceipt, WRITER, writerEnv } from '../support/helpers.ts'

const witness = generateCosignerKey('witness.example/w1')

describe('ledger log', () => {
  let service: RunningService<LedgerConfig>
  let base: string
  let verifierKey: string
  const issuer = newIssuer()

  before(async () => {
    service = await startService(ledger, testEnv({ ...writerEnv, LEDGER_WITNESSES: witness.verifierKey }), {
      fresh: true,
    })
    base = service.url
    verifierKey = (await request(`${base}/v1/key`)).body.verifier_key as string
  })
  after(async () => service.close())

  const treeSize = async () => {
    const note = await (await fetch(`${base}/checkpoint`)).text()
    return parseCheckpoint(openNote(note, [verifierFromKey(verifierKey)]).text).size
  }

  it('publishes a signed checkpoint of the empty tree from the start', async () => {
    const res = await fetch(`${base}/checkpoint`)
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/)
    const checkpoint = parseCheckpoint(openNote(await res.text(), [verifierFromKey(verifierKey)]).text)
    assert.equal(checkpoint.size, 0)
    assert.deepEqual(checkpoint.rootHash, rootFromLeafHashes([]))
  })

  it('appends a receipt once: the index and leaf hash, then the same answer for a duplicate', async () => {
    const signed = signedReceipt(issuer, 'tsk_first')
    const first = await append(base, signed)
    assert.equal(first.status, 201)
    const body = (await first.json()) as {
      index: number
      leaf_hash: string
      tree_size: number
      duplicate: boolean
    }
    assert.equal(body.duplicate, false)
    assert.deepEqual(b64Decode(body.leaf_hash), leafHash(canonicalBytes(signed)))
    assert.ok(body.tree_size > body.index)
    const again = await append(base, signed)
    assert.equal(again.status, 200)
    assert.deepEqual(await again.json(), { ...body, tree_size: body.tree_size, duplicate: true })
    const entry = await request(`${base}/v1/entries/${body.index}`)
    assert.deepEqual(entry.body.receipt, signed.receipt)
    assert.equal(entry.body.signature, signed.signature)
  })

  it('refuses writers without a valid token, forged signatures and malformed receipts, writing nothing', async () => {
    const before = await treeSize()
    const signed = signedReceipt(issuer, 'tsk_refused')
    const noToken = await fetch(`${base}/v1/receipts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signed),
    })
    assert.equal(noToken.status, 401)
    assert.equal(noToken.headers.get('www-authenticate'), 'Bearer realm="ledger"')
    assert.equal((await append(base, signed, 'wrong-token-0000000000')).status, 401)

    const forged = { ...signed, receipt: { ...signed.receipt, subject: 'tsk_other' } }
    const res = await append(base, forged)
    assert.equal(res.status, 400)
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'bad_signature')
    const otherKey = signedReceipt(newIssuer(), 'tsk_refused')
    assert.equal((await append(base, { ...otherKey, receipt: signed.receipt })).status, 400)

    const future = signedReceipt(issuer, 'tsk_future')
    future.receipt.issued_at = new Date(Date.now() + 3600_000).toISOString()
    for (const bad of [
      { ...signed, extra: 1 },
      { receipt: { ...signed.receipt, type: 'NoDots' }, signature: signed.signature },
      { receipt: { ...signed.receipt, issuer: 'did:web:example.com' }, signature: signed.signature },
      { receipt: signed.receipt, signature: 'not-base64url!' },
      // 86 characters hold 516 bits: a last character with its spare bits set is not canonical
      { receipt: signed.receipt, signature: `${signed.signature.slice(0, 85)}B` },
      { receipt: signed.receipt },
      future,
      'not json',
    ]) {
      const answer = await append(base, bad)
      assert.equal(answer.status, 400, JSON.stringify(bad))
    }
    assert.equal(await treeSize(), before, 'the tree did not grow')
  })

  it('appends a batch of receipts in one checkpoint, answering each in order, refusing a bad one on its own', async () => {
    const post = (body: unknown, token = WRITER) =>
      fetch(`${base}/v1/receipts/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      })
    const before = await treeSize()
    const known = signedReceipt(issuer, 'tsk_batch_known')
    const first = (await (await append(base, known)).json()) as { index: number }
    const fresh = [signedReceipt(issuer, 'tsk_batch_1'), signedReceipt(issuer, 'tsk_batch_2')]
    const forged = { ...fresh[0]!, receipt: { ...fresh[0]!.receipt, subject: 'tsk_batch_forged' } }
    const res = await post({ receipts: [fresh[0], forged, known, fresh[1], fresh[1]] })
    assert.equal(res.status, 200)
    const { results } = (await res.json()) as {
      results: Array<{ index?: number; tree_size?: number; duplicate?: boolean; error?: { code: string } }>
    }
    assert.equal(results.length, 5)
    assert.equal(results[0]!.duplicate, false)
    assert.equal(results[1]!.error?.code, 'bad_signature')
    assert.deepEqual([results[2]!.index, results[2]!.duplicate], [first.index, true])
    assert.equal(results[3]!.duplicate, false)
    assert.deepEqual([results[4]!.index, results[4]!.duplicate], [results[3]!.index, true])
    assert.equal(results[0]!.tree_size, results[3]!.tree_size, 'the new receipts share one checkpoint')
    assert.equal(await treeSize(), before + 3, 'the known one, then the two new ones')
    for (const [i, signed] of [0, 3].map((at, n) => [at, fresh[n]!] as const)) {
      const entry = await request(`${base}/v1/entries/${results[i]!.index}`)
      assert.deepEqual(entry.body.receipt, signed.receipt)
    }

    // a batch refused whole writes nothing
    const size = await treeSize()
    const another = signedReceipt(issuer, 'tsk_batch_refused')
    assert.equal((await post({ receipts: [another] }, 'wrong-token-0000000000')).status, 401)
    for (const bad of [
      { receipts: [] },
      { receipts: Array(101).fill(another) },
      [another],
      { receipts: [another], x: 1 },
    ]) {
      const answer = await post(bad)
      assert.equal(answer.status, 400, JSON.stringify(bad).slice(0, 80))
      assert.equal(typeof ((await answer.json()) as { error: { code: string } }).error.code, 'string')
    }
    assert.equal(await treeSize(), size)
  })

  /** The first `size` entries' leaf hashes, read 100 at a time (the reads are not what is tested). */
  const leafHashes = async (size: number) => {
    const leaves: Uint8Array[] = []
    for (let from = 0; from < size; from += 100) {
      const chunk = Array.from({ length: Math.min(100, size - from) }, (_, i) => from + i)
      const answers = await Promise.all(chunk.map((i) => request(`${base}/v1/entries/${i}`)))
      for (const [i, answer] of answers.entries()) {
        assert.equal(answer.status, 200, `entry ${from + i}: ${JSON.stringify(answer.body)}`)
        leaves.push(b64Decode(answer.body.leaf_hash as string))
      }
    }
    return leaves
  }

  it('integrates 1,000 concurrent receipts into one tree whose every proof verifies', async () => {
    const receipts = Array.from({ length: 1000 }, (_, i) => signedReceipt(issuer, `tsk_${i}`, { i }))
    const answers: Array<{ index: number }> = []
    for (let i = 0; i < receipts.length; i += 50) {
      const batch = await Promise.all(
        receipts.slice(i, i + 50).map((r) => append(base, r).then((res) => res.json())),
      )
      answers.push(...(batch as Array<{ index: number }>))
    }
    const indices = answers.map((a) => a.index).sort((a, b) => a - b)
    assert.equal(new Set(indices).size, 1000, 'every receipt has its own index')

    const size = await treeSize()
    const leaves = await leafHashes(size)
    const note = await (await fetch(`${base}/v1/checkpoints/${size}`)).text()
    const root = parseCheckpoint(openNote(note, [verifierFromKey(verifierKey)]).text).rootHash
    assert.deepEqual(
      root,
      rootFromLeafHashes(leaves),
      'the checkpoint root is the RFC 9162 root of the entries',
    )

    for (let index = 0; index < size; index++) {
      const proof = await request(`${base}/v1/proofs/inclusion?index=${index}&tree_size=${size}`)
      assert.equal(proof.status, 200)
      const ok = verifyInclusion(
        leaves[index]!,
        index,
        size,
        (proof.body.proof as string[]).map(b64Decode),
        root,
      )
      assert.ok(ok, `inclusion of ${index} in ${size}`)
    }
    for (const [from, to] of [
      [1, size],
      [7, 300],
      [256, 512],
      [511, 1000],
      [size - 1, size],
      [333, 334],
    ] as const) {
      const older = await (await fetch(`${base}/v1/checkpoints/${from}`)).text()
      const newer = await (await fetch(`${base}/v1/checkpoints/${to}`)).text()
      if (!older.includes('\n') || !newer.includes('\n')) continue // sizes between batches have no checkpoint
      const proof = await request(`${base}/v1/proofs/consistency?from=${from}&to=${to}`)
      const oldRoot = rootFromLeafHashes(leaves.slice(0, from))
      const newRoot = rootFromLeafHashes(leaves.slice(0, to))
      assert.ok(
        verifyConsistency(from, to, oldRoot, newRoot, (proof.body.proof as string[]).map(b64Decode)),
        `${from}→${to}`,
      )
    }
  })

  it('proves inclusion in a tree size that has no checkpoint (between two batches)', async () => {
    const size = await treeSize()
    let between = 0
    for (let s = size - 1; s > 1 && !between; s--)
      if ((await fetch(`${base}/v1/checkpoints/${s}`)).status === 404) between = s
    assert.ok(between > 1, 'concurrent appends leave sizes without a checkpoint')
    const leaves = await leafHashes(between)
    const root = rootFromLeafHashes(leaves)
    for (const index of [0, Math.floor(between / 2), between - 1]) {
      const proof = await request(`${base}/v1/proofs/inclusion?index=${index}&tree_size=${between}`)
      assert.equal(proof.status, 200)
      assert.equal(proof.body.tree_size, between)
      assert.equal(proof.body.checkpoint, undefined)
      const path = (proof.body.proof as string[]).map(b64Decode)
      assert.ok(verifyInclusion(leaves[index]!, index, between, path, root), `${index} in ${between}`)
    }
    // a bundle is verified offline against a signed checkpoint: a 400 naming the sizes that have one
    const bundle = await request(`${base}/v1/entries/0/bundle?tree_size=${between}`)
    assert.equal(bundle.status, 400)
    const error = bundle.body.error as { code: string; message: string }
    assert.equal(error.code, 'no_checkpoint_for_size')
    assert.match(error.message, /nearest checkpointed sizes are \d+/)
  })

  it('serves hash tiles and entry bundles at their tlog-tiles paths, immutable', async () => {
    const size = await treeSize()
    const full = await fetch(`${base}/tile/0/000`)
    assert.equal(full.status, 200)
    assert.equal(full.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    const hashes = new Uint8Array(await full.arrayBuffer())
    assert.equal(hashes.length, 256 * 32)
    const bundle = decodeEntryBundle(
      new Uint8Array(await (await fetch(`${base}/tile/entries/000`)).arrayBuffer()),
    )
    assert.equal(bundle.length, 256)
    bundle.forEach((entry, i) => assert.deepEqual(leafHash(entry), hashes.subarray(i * 32, (i + 1) * 32)))

    const lastTile = Math.floor(size / 256)
    const width = size % 256
    if (width > 0) {
      const name = String(lastTile).padStart(3, '0')
      assert.equal((await fetch(`${base}/tile/0/${name}`)).status, 404, 'a full tile that is not full yet')
      const partial = await fetch(`${base}/tile/0/${name}.p/${width}`)
      assert.equal(partial.status, 200)
      assert.equal((await partial.arrayBuffer()).byteLength, width * 32)
    }
    assert.equal(
      (await fetch(`${base}/tile/1/000.p/3`)).status,
      200,
      'level-1 tile: roots of complete level-0 tiles',
    )
    assert.equal((await fetch(`${base}/tile/0/x999/000`)).status, 404)
    assert.equal((await fetch(`${base}/tile/0/0000`)).status, 404, 'a non-canonical path is not a tile')
  })

  it('answers bad reads with clear 4XX errors', async () => {
    const size = await treeSize()
    const cases: Array<[string, number, string]> = [
      [`/v1/entries/${size + 10}`, 404, 'unknown_index'],
      [`/v1/proofs/inclusion?index=0&tree_size=${size + 1}`, 400, 'size_beyond_tree'],
      [`/v1/proofs/inclusion?index=${size + 5}`, 404, 'unknown_index'],
      [`/v1/proofs/consistency?from=${size + 1}`, 400, 'invalid_sizes'],
      ['/v1/proofs/consistency?from=0', 400, 'invalid_request'],
      ['/v1/entries/-1', 400, 'invalid_request'],
      ['/v1/checkpoints/999999999', 404, 'unknown_size'],
    ]
    for (const [path, status, code] of cases) {
      const res = await request(base + path)
      assert.equal(res.status, status, path)
      assert.equal((res.body.error as { code: string }).code, code, path)
    }
  })

  it('lets writers search receipts by subject and issuer, page by page', async () => {
    const other = newIssuer()
    for (const n of [1, 2, 3]) await append(base, signedReceipt(other, 'eng_search', { n }))
    const auth = { authorization: `Bearer ${WRITER}` }
    const page = await request(`${base}/v1/receipts?subject=eng_search&limit=2`, { headers: auth })
    assert.equal(page.status, 200)
    const receipts = page.body.receipts as Array<{ index: number; receipt: { data: { n: number } } }>
    assert.deepEqual(
      receipts.map((r) => r.receipt.data.n),
      [1, 2],
    )
    const next = await request(
      `${base}/v1/receipts?subject=eng_search&limit=2&after=${page.body.next_after}`,
      { headers: auth },
    )
    assert.deepEqual(
      (next.body.receipts as typeof receipts).map((r) => r.receipt.data.n),
      [3],
    )
    const byIssuer = await request(`${base}/v1/receipts?issuer=${other.did}`, { headers: auth })
    assert.equal((byIssuer.body.receipts as unknown[]).length, 3)
    assert.equal((await request(`${base}/v1/receipts?subject=eng_search`)).status, 401)
    assert.equal((await request(`${base}/v1/receipts`, { headers: auth })).status, 400)
  })

  it('accepts a known witness cosignature and serves the cosigned checkpoint', async () => {
    const note = await (await fetch(`${base}/checkpoint`)).text()
    const { text, signatures } = parseNote(note)
    const cosigned = signNote(
      text,
      [cosignerFromKey(witness.signerKey)],
      signatures.map((s) => s.line),
    )
    const res = await request(`${base}/v1/cosignatures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: cosigned }),
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.witnesses, ['witness.example/w1'])
    const served = await (await fetch(`${base}/checkpoint`)).text()
    const opened = openNote(served, [
      verifierFromKey(verifierKey),
      cosignatureVerifierFromKey(witness.verifierKey),
    ])
    assert.equal(opened.verified.length, 2, 'signed by the log and cosigned by the witness')

    const stranger = generateCosignerKey('stranger.example')
    const unknown = signNote(text, [cosignerFromKey(stranger.signerKey)])
    const refused = await request(`${base}/v1/cosignatures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: unknown }),
    })
    assert.equal(refused.status, 400)
    assert.equal((refused.body.error as { code: string }).code, 'no_known_witness')
  })

  it('publishes its key as a signed-note verifier key, a JWK and a did:key', async () => {
    const key = await request(`${base}/v1/key`)
    assert.match(key.body.verifier_key as string, /^[^+]+\+[0-9a-f]{8}\+[A-Za-z0-9+/=]+$/)
    const jwk = key.body.jwk as { kty: string; crv: string; x: string }
    assert.equal(jwk.kty, 'OKP')
    assert.equal(jwk.crv, 'Ed25519')
    assert.match(key.body.did as string, /^did:key:z6Mk/)
  })
})
