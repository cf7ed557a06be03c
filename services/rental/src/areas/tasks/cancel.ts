import { inTransaction } from '../../db.ts'
import type { MoneyDeps } from '../engagements/service.ts'

/**
 * Cancels the client's task if it has not ended: one conditional update, so of a cancel and the
 * agent's answer only the first counts (the runner drops an answer for a task already ended).
 * True when this call canceled it.
 */
export async function cancelTask(deps: MoneyDeps, subject: string, id: string): Promise<boolean> {
  return inTransaction(deps.db, async (trx) => {
    const canceled = await trx
      .updateTable('tasks')
      .set({ state: 'canceled', error: 'canceled by the client', completed_at: deps.now(), input_text: null })
      .where('id', '=', id)
      .where('client_subject', '=', subject)
      .where('state', 'in', ['submitted', 'working'])
      .executeTakeFirst()
    return Number(canceled.numUpdatedRows) === 1
  })
}
