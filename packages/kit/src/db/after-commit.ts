import type { Kysely, Transaction } from 'kysely'

/** What runs once the transaction it was registered on has committed (never on a rollback). */
const pending = new WeakMap<object, Array<() => void>>()

/**
 * Runs `work` in a transaction, then, once it has committed, what `afterCommit` registered on it.
 * A rolled-back transaction runs none of them.
 */
export async function transactionWithHooks<DB, T>(
  db: Kysely<DB>,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const hooks: Array<() => void> = []
  const result = await db.transaction().execute((trx) => {
    pending.set(trx, hooks)
    return work(trx)
  })
  for (const hook of hooks) {
    try {
      hook()
    } catch {}
  }
  return result
}

/**
 * Registers `hook` to run after `executor`'s transaction commits, when that transaction was opened
 * by `transactionWithHooks`; otherwise (autocommit, or a transaction opened elsewhere) it runs at
 * once. A hook is a hint (a wake-up), never a guarantee: whatever must happen is in the transaction.
 */
export function afterCommit(executor: object, hook: () => void): void {
  const hooks = pending.get(executor)
  if (hooks) hooks.push(hook)
  else hook()
}
