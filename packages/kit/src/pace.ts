/** How long a poller keeps looking often after it last saw work (a burst usually goes on). */
const BUSY_FOR_MS = 10_000

/**
 * How often a poller looks when nothing has told it of work: every `busyMs` for a while after it
 * last saw some, every `restMs` at rest. What a resting service costs is its pollers' statements
 * (docs/performance.md, At rest); a burst is still answered within `busyMs`.
 */
export class Pace {
  #lastBusy = Date.now()
  constructor(private readonly options: { busyMs: number; restMs: number; busyForMs?: number }) {}

  /** Work was seen (or is coming): look often again. */
  busy(): void {
    this.#lastBusy = Date.now()
  }

  get resting(): boolean {
    return Date.now() - this.#lastBusy >= (this.options.busyForMs ?? BUSY_FOR_MS)
  }

  /** The next sleep, in milliseconds. */
  next(busyMs = this.options.busyMs): number {
    return this.resting ? Math.max(busyMs, this.options.restMs) : busyMs
  }
}

/** A sleep that `wake()` ends early (on stop, or when work arrives); a wake between sleeps skips the next one. */
export class Pause {
  #wake: (() => void) | undefined
  #woken = false
  /** Resolves true when woken, false when the time ran out. */
  sleep(ms: number): Promise<boolean> {
    if (this.#woken) {
      this.#woken = false
      return Promise.resolve(true)
    }
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined
        resolve(false)
      }, ms)
      timer.unref?.()
      this.#wake = () => {
        this.#wake = undefined
        clearTimeout(timer)
        resolve(true)
      }
    })
  }

  /** Whether a sleep is under way (a wake now ends it rather than skipping the next). */
  get sleeping(): boolean {
    return this.#wake !== undefined
  }

  wake(): void {
    if (this.#wake) this.#wake()
    else this.#woken = true
  }
}
