import type { RentalDb } from '../../db.ts'
import { escrowsOf } from './escrow-store.ts'

/** Writes of an engagement's end (areas/ending does the rules), in the end's transaction. */

/** The engagement's escrows locked FOR UPDATE (the engagement row is locked first by the caller). */
export const lockEscrowsOf = (trx: RentalDb, engagementId: string) => escrowsOf(trx, engagementId, true)

/** The engagement's escrows as `trx` sees them, unlocked (the engagement row is locked by the caller). */
export { escrowsOf }

export async function markEnded(trx: RentalDb, id: string, answer: unknown, at: Date) {
  await trx
    .updateTable('engagements')
    .set({ state: 'ended', ended_at: at, end_answer: JSON.stringify(answer) })
    .where('id', '=', id)
    .execute()
}

/** An opened escrow's money went back to the client (`transferId`), or an offered one was withdrawn (null). */
export async function markReturned(trx: RentalDb, escrowId: string, transferId: string | null, at: Date) {
  await trx
    .updateTable('escrows')
    .set({
      state: transferId === null ? 'withdrawn' : 'returned',
      return_transfer_id: transferId,
      returned_at: at,
    })
    .where('id', '=', escrowId)
    .execute()
}
