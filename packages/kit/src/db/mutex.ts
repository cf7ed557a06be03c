/** A FIFO lock. PGlite is one connection, so one holder at a time owns it. */
export class Mutex {
  #locked = false
  #waiters: Array<() => void> = []

  async lock(timeoutMs: number, onTimeout: () => Error): Promise<void> {
    if (!this.#locked) {
      this.#locked = true
      return
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
        reject(onTimeout())
      }, timeoutMs)
      this.#waiters.push(waiter)
    })
  }

  unlock(): void {
    const next = this.#waiters.shift()
    if (next) next()
    else this.#locked = false
  }
}
