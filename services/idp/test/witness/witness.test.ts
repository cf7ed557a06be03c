import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { formatCheckpoint } from '@svc/trust/checkpoint'
import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import { verifyEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import { consistencyProof, type Hash, leafHash, treeRoot } from '@svc/trust/merkle'
import { MemoryLog } from '@svc/trust/merkle.testkit'
import { generateNoteKey, openNote, signerFromKey, signNote, verifierFromKey } from '@svc/trust/note'
import { formatAddCheckpoint } from '@svc/trust/witness'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'

const ORIGIN = 'ledger.test/log'

/** A log of our own making, signed with `signerKey`, to show the witness honest and dishonest checkpoints. */
class TestLog {
  readonly tree = new MemoryLog()
  constructor(readonly signerKey: string) {}

  async grow(count: number) {
    await this.tree.append(Array.from({ length: count }, () => leafHash(randomBytes(16))))
  }

  root = (size = this.tree.size) => treeRoot(size, this.tree.reader(size))
  proof = (from: number, to = this.tree.size) =>
    from === 0 ? Promise.resolve([]) : consistencyProof(from, to, this.tree.reader(to))

  async note(size = this.tree.size) {
    const text = formatCheckpoint({ origin: ORIGIN, size, rootHash: await this.root(size), extensions: [] })
    return signNote(text, [signerFromKey(this.signerKey)])
  }
}

describe('the idp witnesses the ledger (C2SP tlog-witness)', () => {
  let service: RunningService<IdpConfig>
  const logKey = generateNoteKey(ORIGIN)
  const log = new TestLog(logKey.signerKey)

  const submit = async (oldSize: number, proof: Hash[], note: string) => {
    const res = await fetch(`${service.url}/witness/add-checkpoint`, {
      method: 'POST',
      body: formatAddCheckpoint({ oldSize, proof, note }),
    })
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
  }
  const witnessDocument = async () => {
    const res = await request(`${service.url}/.well-known/svc-witness.json`)
    assert.equal(res.status, 200)
    assert.ok(verifyEddsaJcs2022Proof(res.body).verified)
    return res.body as {
      witness: { name: string; verifier_key: string; submission_prefix: string }
      logs: Array<{ origin: string; tree_size: number; root_hash: string; checkpoint: string }>
      split_view: { detected: boolean; evidence: Array<{ kind: string; presented_request: string }> }
    }
  }
  const cosignatureOf = async (note: string, lines: string) => {
    const { witness } = await witnessDocument()
    const opened = openNote(`${note}${lines}`, [
      verifierFromKey(logKey.verifierKey),
      cosignatureVerifierFromKey(witness.verifier_key),
    ])
    return opened.verified.map((s) => s.name)
  }

  before(async () => {
    service = await startService(idp, testEnv({ IDP_WITNESS_LOGS: logKey.verifierKey }), { fresh: true })
    await log.grow(4)
  })
  after(async () => service.close())

  it('cosigns a first checkpoint sent with old size 0 and no proof', async () => {
    const note = await log.note()
    const res = await submit(0, [], note)
    assert.equal(res.status, 200, res.text)
    assert.match(res.text, /^— \S+ \S+\n$/)
    const { witness } = await witnessDocument()
    assert.equal(witness.submission_prefix, `${service.url}/witness`)
    assert.deepEqual(await cosignatureOf(note, res.text), [ORIGIN, witness.name])
    const timestamp = cosignatureVerifierFromKey(witness.verifier_key).timestampOf(
      Buffer.from(res.text.trim().split(' ')[2]!, 'base64').subarray(4),
    )
    assert.ok(Math.abs(timestamp - Date.now() / 1000) < 60)
  })

  it('cosigns a grown checkpoint whose consistency proof from the cosigned one verifies', async () => {
    await log.grow(5)
    const note = await log.note()
    const res = await submit(4, await log.proof(4), note)
    assert.equal(res.status, 200, res.text)
    const { logs } = await witnessDocument()
    assert.equal(logs.length, 1)
    assert.equal(logs[0]!.tree_size, 9)
    assert.equal(logs[0]!.root_hash, Buffer.from(await log.root()).toString('base64'))
    assert.equal(logs[0]!.checkpoint, `${note}${res.text}`)
  })

  it('answers 409 with its latest size (text/x.tlog.size) when the old size is not the one it cosigned', async () => {
    await log.grow(2)
    const res = await submit(4, await log.proof(4), await log.note())
    assert.equal(res.status, 409)
    assert.equal(res.type, 'text/x.tlog.size')
    assert.equal(res.text, '9\n')
  })

  it('refuses a rollback: an older checkpoint is never cosigned', async () => {
    const older = await log.note(5)
    assert.equal((await submit(9, [], older)).status, 400)
    const res = await submit(5, [], older)
    assert.equal(res.status, 409)
    assert.equal(res.text, '9\n')
    assert.equal((await witnessDocument()).logs[0]!.tree_size, 9)
  })

  it('answers 404 for a log it does not witness, 403 for a checkpoint its log did not sign, 400 for a malformed body', async () => {
    const stranger = generateNoteKey('elsewhere.test/log')
    const text = formatCheckpoint({
      origin: 'elsewhere.test/log',
      size: 1,
      rootHash: randomBytes(32),
      extensions: [],
    })
    assert.equal((await submit(0, [], signNote(text, [signerFromKey(stranger.signerKey)]))).status, 404)
    const impostor = generateNoteKey(ORIGIN)
    const forged = signNote(
      formatCheckpoint({ origin: ORIGIN, size: 11, rootHash: await log.root(), extensions: [] }),
      [signerFromKey(impostor.signerKey)],
    )
    assert.equal((await submit(9, await log.proof(9), forged)).status, 403)
    for (const body of ['', 'old 9\n', 'hello\n\nworld\n'])
      assert.equal(
        (await fetch(`${service.url}/witness/add-checkpoint`, { method: 'POST', body })).status,
        400,
      )
  })

  it('answers 422 to a signed checkpoint it cannot prove consistent, keeps the evidence and says so', async () => {
    const proof = await log.proof(9)
    proof[0] = randomBytes(32)
    const res = await submit(9, proof, await log.note())
    assert.equal(res.status, 422)
    const { split_view, logs } = await witnessDocument()
    assert.equal(logs[0]!.tree_size, 9)
    assert.equal(split_view.detected, true)
    assert.equal(split_view.evidence[0]!.kind, 'inconsistent')
  })

  it('detects a split view: a second signed checkpoint of the cosigned size with another root', async () => {
    const fork = new TestLog(logKey.signerKey)
    await fork.grow(9)
    const forked = await fork.note()
    const res = await submit(9, [], forked)
    assert.equal(res.status, 409)
    const evidence = (await witnessDocument()).split_view.evidence.find((e) => e.kind === 'fork')
    assert.ok(evidence, 'the fork is kept')
    assert.ok(evidence.presented_request.endsWith(forked))
    // the evidence proves itself: both checkpoints verify with the log's key
    const cosigned = (await witnessDocument()).logs[0]!.checkpoint
    for (const note of [cosigned, forked]) openNote(note, [verifierFromKey(logKey.verifierKey)])
  })

  it('lists its cosignatures after a time or a tree size, page by page', async () => {
    const all = await request(`${service.url}/.well-known/svc-cosignatures.json`)
    assert.equal(all.status, 200)
    const list = all.body.cosignatures as Array<{
      tree_size: number
      cosigned_at: string
      checkpoint: string
    }>
    assert.deepEqual(
      list.map((c) => c.tree_size),
      [4, 9],
    )
    const page = await request(`${service.url}/.well-known/svc-cosignatures.json?limit=1`)
    assert.equal((page.body.cosignatures as unknown[]).length, 1)
    const next = await request(page.body.next as string)
    assert.deepEqual(
      (next.body.cosignatures as Array<{ tree_size: number }>).map((c) => c.tree_size),
      [9],
    )
    const bySize = await request(`${service.url}/.well-known/svc-cosignatures.json?since=4`)
    assert.deepEqual(
      (bySize.body.cosignatures as Array<{ tree_size: number }>).map((c) => c.tree_size),
      [9],
    )
    for (const query of ['since=yesterday', 'limit=0', 'limit=1001', 'other=1'])
      assert.equal(
        (await request(`${service.url}/.well-known/svc-cosignatures.json?${query}`)).status,
        400,
        query,
      )
  })
})
