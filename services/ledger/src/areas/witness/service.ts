import { badRequest, notFound } from '@svc/kit'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import { parseNote } from '@svc/trust/note'
import type { LedgerDb } from '../../db.ts'

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
    throw badRequest(`not a checkpoint note: ${(err as Error).message}`, 'malformed_note')
  }
  const ours = await db
    .selectFrom('checkpoints')
    .select('note')
    .where('tree_size', '=', size)
    .executeTakeFirst()
  if (!ours) throw notFound(`no checkpoint of size ${size}`, 'unknown_size')
  if (parseNote(ours.note).text !== parsed.text)
    throw badRequest('the checkpoint text differs from the one this log signed', 'checkpoint_mismatch')

  const witnesses = witnessKeys.map(cosignatureVerifierFromKey)
  const accepted: Array<{ witness: string; line: string; at: Date }> = []
  for (const signature of parsed.signatures) {
    const witness = witnesses.find((w) => w.name === signature.name && w.keyId === signature.keyId)
    if (!witness) continue
    if (!witness.verify(new TextEncoder().encode(parsed.text), signature.signature))
      throw badRequest(`the cosignature of ${signature.name} does not verify`, 'bad_signature')
    accepted.push({
      witness: witness.name,
      line: signature.line,
      at: new Date(witness.timestampOf(signature.signature) * 1000),
    })
  }
  if (accepted.length === 0)
    throw badRequest('the note carries no cosignature from a known witness', 'no_known_witness')
  for (const c of accepted)
    await db
      .insertInto('cosignatures')
      .values({ tree_size: size, witness: c.witness, signature_line: c.line, cosigned_at: c.at })
      .onConflict((oc) =>
        oc
          .columns(['tree_size', 'witness'])
          .doUpdateSet({ signature_line: c.line, cosigned_at: c.at, received_at: new Date() }),
      )
      .execute()
  return { tree_size: size, witnesses: accepted.map((c) => c.witness) }
}
