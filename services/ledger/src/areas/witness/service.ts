import { ledgerError } from '../../errors.ts'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import { parseNote } from '@svc/trust/note'
import type { LedgerDb } from '../../db.ts'
import { signedCheckpointOf } from '../log/index.ts'
import { keepCosignature } from './store.ts'

/**
 * Accepts witness cosignatures (C2SP tlog-cosignature) on one of our checkpoints. The checkpoint
 * text must be exactly one we signed; each cosignature must verify with a configured witness key.
 */
export async function acceptCosignatures(db: LedgerDb, witnessKeys: string[], note: string) {
  let parsed: ReturnType<typeof parseNote>
  let size: number
  try {
    parsed = parseNote(note)
    size = parseCheckpoint(parsed.text).size
  } catch (err) {
    throw ledgerError('malformed_note', `not a checkpoint note: ${(err as Error).message}`)
  }
  const ours = await signedCheckpointOf(db, size)
  if (ours === undefined) throw ledgerError('unknown_size', `no checkpoint of size ${size}`)
  if (parseNote(ours).text !== parsed.text)
    throw ledgerError('checkpoint_mismatch', 'the checkpoint text differs from the one this log signed')

  const witnesses = witnessKeys.map(cosignatureVerifierFromKey)
  const accepted: Array<{ witness: string; line: string; at: Date }> = []
  for (const signature of parsed.signatures) {
    const witness = witnesses.find((w) => w.name === signature.name && w.keyId === signature.keyId)
    if (!witness) continue
    if (!witness.verify(new TextEncoder().encode(parsed.text), signature.signature))
      throw ledgerError('bad_signature', `the cosignature of ${signature.name} does not verify`)
    accepted.push({
      witness: witness.name,
      line: signature.line,
      at: new Date(witness.timestampOf(signature.signature) * 1000),
    })
  }
  if (accepted.length === 0)
    throw ledgerError('no_known_witness', 'the note carries no cosignature from a known witness')
  for (const c of accepted) await keepCosignature(db, { size, ...c })
  return { tree_size: size, witnesses: accepted.map((c) => c.witness) }
}
