import { formatCheckpoint } from '@svc/trust/checkpoint'
import { EMPTY_ROOT } from '@svc/trust/merkle'
import { type NoteSigner, signNote } from '@svc/trust/note'
import type { LedgerDb } from '../../db.ts'
import { insertEmptyCheckpoint } from './store.ts'

/** The checkpoint of the empty tree, so /checkpoint answers from the first start. */
export async function publishEmptyCheckpoint(db: LedgerDb, origin: string, signer: NoteSigner) {
  const note = signNote(formatCheckpoint({ origin, size: 0, rootHash: EMPTY_ROOT, extensions: [] }), [signer])
  await insertEmptyCheckpoint(db, Buffer.from(EMPTY_ROOT), note)
}
