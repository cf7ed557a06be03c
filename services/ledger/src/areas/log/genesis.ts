import { formatCheckpoint } from '@svc/trust/checkpoint'
import { EMPTY_ROOT } from '@svc/trust/merkle'
import { type NoteSigner, signNote } from '@svc/trust/note'
import type { Kysely } from 'kysely'
import type { LedgerTables } from '../../db.ts'

/** The checkpoint of the empty tree, so /checkpoint answers from the first start. */
export async function publishEmptyCheckpoint(db: Kysely<LedgerTables>, origin: string, signer: NoteSigner) {
  const note = signNote(formatCheckpoint({ origin, size: 0, rootHash: EMPTY_ROOT, extensions: [] }), [signer])
  await db
    .insertInto('checkpoints')
    .values({ tree_size: 0, root_hash: Buffer.from(EMPTY_ROOT), note })
    .onConflict((oc) => oc.column('tree_size').doNothing())
    .execute()
}
