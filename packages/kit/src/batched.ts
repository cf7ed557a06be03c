/**
 * Calls run together: `run` gets every item asked for since its last run began (those of one turn
 * of the event loop, and those asked for while it ran), one run at a time, and answers one result
 * per item, in order. The outbox marks the receipts the ledger took (however many deliveries ended
 * meanwhile) in one statement, and reads a fetched batch of retries in one.
 */
export function batched<T, R>(run: (items: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  let waiting: Array<{ item: T; resolve: (r: R) => void; reject: (err: unknown) => void }> = []
  let running = false
  const flush = () => {
    if (running || waiting.length === 0) return
    const taken = waiting
    waiting = []
    running = true
    run(taken.map((w) => w.item))
      .then(
        (results) => taken.forEach((w, i) => w.resolve(results[i]!)),
        (err: unknown) => taken.forEach((w) => w.reject(err)),
      )
      .finally(() => {
        running = false
        flush()
      })
  }
  return (item) =>
    new Promise<R>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(flush)
      waiting.push({ item, resolve, reject })
    })
}
