import type { Kysely, Transaction } from 'kysely'

/** What runs once the transaction it was registered on has committed (never on a rollback). */
const pending = new WeakMap<object, Array<() => void>>()

/**
 * Runs `work` in one transaction, then, once it has committed, what `afterCommit` registered on it;
 * a rolled-back transaction runs none of them. Every service's `inTransaction` is this one. `db` is
 * a database or (typed as one) a transaction: Kysely refuses a transaction inside a transaction.
 */
export async function inTransaction<DB, T>(
  db: Kysely<DB> | Transaction<DB>,
  work: (trx: Transaction<DB>) => Promise<T>,
): Promise<T> {
  const hooks: Array<() => void> = []
  const result = await (db as Kysely<DB>).transaction().execute((trx) => {
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
 * by `inTransaction`; otherwise (autocommit, or a transaction opened elsewhere) it runs at once. A
 * hook is a hint (a wake-up), never a guarantee: whatever must happen is in the transaction.
 */
export function afterCommit(executor: object, hook: () => void): void {
  if (!onCommit(executor, hook)) hook()
}

/**
 * Registers `hook` to run once `executor`'s transaction commits, when that transaction was opened
 * by `inTransaction`; false (and nothing registered) otherwise: for work that must not start
 * before the commit (the receipt writer's direct delivery), which the caller then does another way.
 */
export function onCommit(executor: object, hook: () => void): boolean {
  const hooks = pending.get(executor)
  if (hooks) hooks.push(hook)
  return hooks !== undefined
}
