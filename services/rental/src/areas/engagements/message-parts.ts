import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import type { EngagementRow } from './store.ts'

/**
 * What other areas add to the A2A message of an engagement's tasks, kept on the engagement's row
 * (`message_parts`, migration 0056) so that a task's run learns it with the engagement's terms,
 * without a read per area (issue 34). Each area names its own part and sets it in the transaction
 * that adds or removes what it stands for; the update takes the engagement's row lock, so two such
 * transactions on one engagement take turns.
 */
export interface MessageParts {
  /** Sets (`present`) or removes the area's `part` of the engagement, in the caller's transaction. */
  setMessagePart(trx: RentalDb, engagementId: string, part: string, present: boolean): Promise<void>
}

export const hasMessagePart = (engagement: Pick<EngagementRow, 'message_parts'>, part: string) =>
  engagement.message_parts.includes(part)

export const messageParts: MessageParts = {
  async setMessagePart(trx, engagementId, part, present) {
    const without = sql<string[]>`array_remove(message_parts, ${part}::text)`
    await trx
      .updateTable('engagements')
      .set({ message_parts: present ? sql<string[]>`array_append(${without}, ${part}::text)` : without })
      .where('id', '=', engagementId)
      .execute()
  },
}
