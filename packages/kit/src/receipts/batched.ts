/**
 * Calls made in the same turn of the event loop run together: `run` gets every item asked for
 * since the first, and answers one result per item, in order. The outbox's deliveries of one
 * fetched batch read their rows, and mark those the ledger answered together, in one statement.
 */
export function batched<T, R>(run: (items: T[]) => Promise<R[]>): (item: T) => Promise<R> {
  let waiting: Array<{ item: T; resolve: (r: R) => void; reject: (err: unknown) => void }> = []
  const flush = () => {
    const taken = waiting
    waiting = []
    run(taken.map((w) => w.item)).then(
      (results) => taken.forEach((w, i) => w.resolve(results[i]!)),
      (err: unknown) => taken.forEach((w) => w.reject(err)),
    )
  }
  return (item) =>
    new Promise<R>((resolve, reject) => {
      if (waiting.length === 0) setImmediate(flush)
      waiting.push({ item, resolve, reject })
    })
}
