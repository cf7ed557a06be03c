import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import { generateNoteKey, openNote, verifierFromKey } from '@svc/trust/note'
import { idp } from '../../../idp/src/app.ts'
import { ledger } from '../../src/app.ts'
import { append, newIssuer, signedReceipt, writerEnv } from '../support/helpers.ts'

const ORIGIN = 'ledger.witnessed.test'

describe('the ledger has each new checkpoint cosigned by its witness (C2SP tlog-witness)', () => {
  let witness: RunningService<unknown>
  let log: RunningService<unknown>
  let witnessKey: string
  const logKey = generateNoteKey(ORIGIN)
  const issuer = newIssuer()

  before(async () => {
    witness = await startService(idp, testEnv({ IDP_WITNESS_LOGS: logKey.verifierKey }), { fresh: true })
    witnessKey = (
      (await request(`${witness.url}/.well-known/svc-witness.json`)).body.witness as {
        verifier_key: string
      }
    ).verifier_key
    log = await startService(
      ledger,
      testEnv({
        ...writerEnv,
        LEDGER_ORIGIN: ORIGIN,
        LEDGER_SIGNING_KEY: logKey.signerKey,
        LEDGER_WITNESSES: `${witnessKey} ${witness.url}/witness`,
      }),
      { fresh: true },
    )
  })
  after(async () => {
    await log?.close()
    await witness?.close()
  })

  /** The ledger's /checkpoint once it is of `size` and carries the witness's cosignature (10 s at most). */
  async function cosignedCheckpoint(size: number): Promise<string> {
    const deadline = Date.now() + 10_000
    for (;;) {
      const note = await (await fetch(`${log.url}/checkpoint`)).text()
      const opened = openNote(note, [
        verifierFromKey(logKey.verifierKey),
        cosignatureVerifierFromKey(witnessKey),
      ])
      if (note.split('\n')[1] === String(size) && opened.verified.length === 2) return note
      if (Date.now() > deadline) throw new Error(`no cosigned checkpoint of size ${size}: ${note}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  it('serves a checkpoint cosigned by the witness soon after each append', async () => {
    for (const subject of ['a', 'b', 'c'])
      assert.equal((await append(log.url, signedReceipt(issuer, subject))).status, 201)
    await cosignedCheckpoint(3)
    for (const subject of ['d', 'e']) await append(log.url, signedReceipt(issuer, subject))
    const note = await cosignedCheckpoint(5)

    // the witness published what it cosigned: the same checkpoint, the same cosignature
    const published = await request(`${witness.url}/.well-known/svc-witness.json`)
    const logs = published.body.logs as Array<{ origin: string; tree_size: number; checkpoint: string }>
    assert.equal(logs[0]!.origin, ORIGIN)
    assert.equal(logs[0]!.tree_size, 5)
    assert.equal(logs[0]!.checkpoint, note)
    const history = await request(`${witness.url}/.well-known/svc-cosignatures.json`)
    const sizes = (history.body.cosignatures as Array<{ tree_size: number }>).map((c) => c.tree_size)
    assert.equal(sizes.at(-1), 5)
    assert.deepEqual(
      sizes,
      [...sizes].sort((x, y) => x - y),
    )
  })

  it('asks the witness about once a second (LEDGER_WITNESS_INTERVAL_MS), not once per batch, and always for the latest', async () => {
    const history = async () =>
      (
        (await request(`${witness.url}/.well-known/svc-cosignatures.json`)).body.cosignatures as Array<{
          tree_size: number
        }>
      ).map((c) => c.tree_size)
    const before = (await history()).length
    const started = Date.now()
    // one at a time: each append is a batch of its own, with its own checkpoint
    for (let i = 0; i < 10; i++)
      assert.equal((await append(log.url, signedReceipt(issuer, `spaced-${i}`))).status, 201)
    const appending = Date.now() - started
    await cosignedCheckpoint(15)
    const rounds = (await history()).slice(before)
    assert.equal(rounds.at(-1), 15, 'the latest checkpoint is cosigned')
    assert.ok(
      rounds.length <= Math.ceil(appending / 1000) + 2,
      `${rounds.length} cosignatures for 10 batches in ${appending} ms: ${rounds.join(', ')}`,
    )
  })
})
