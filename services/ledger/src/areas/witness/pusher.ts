import { consistencyProof } from '@svc/trust/merkle'
import { cosignatureVerifierFromKey } from '@svc/trust/cosignature'
import { formatAddCheckpoint, parseTlogSize, TLOG_SIZE_CONTENT_TYPE } from '@svc/trust/witness'
import type { Logger } from 'pino'
import type { WitnessTarget } from '../../config.ts'
import type { LedgerDb } from '../../db.ts'
import { latestSignedCheckpoint, nodeReader } from '../log/index.ts'
import { acceptCosignatures } from './service.ts'
import { sizeCosignedBy } from './store.ts'

const REQUEST_TIMEOUT_MS = 10_000
const MAX_RETRY_DELAY_MS = 60_000
/** 409 answers followed in one round: a witness moved by another instance of the log, say. */
const MAX_CONFLICTS = 3

export interface WitnessSet {
  /** Every witness key the log accepts cosignatures from (configured, and discovered in development). */
  keys(): string[]
  /** The witnesses to ask, found now if they must be discovered. */
  targets(): Promise<WitnessTarget[]>
}

/**
 * Asks each witness to cosign the latest checkpoint (C2SP tlog-witness add-checkpoint) whenever
 * the tree grows, and once at start. What a witness must see is only ever the latest checkpoint,
 * re-read at each round, so nothing is queued: a round that fails is retried with backoff, a
 * round asked for while one runs runs again after it, and a restart catches up. Rounds are at
 * least `intervalMs` apart (from one's start to the next's): a log growing by many small batches
 * has its latest checkpoint cosigned about once per interval rather than once per batch.
 */
export class WitnessPusher {
  #running = false
  #again = false
  #retry: NodeJS.Timeout | undefined
  #failures = 0
  #closed = false
  #lastStart = -Infinity
  #spaced: NodeJS.Timeout | undefined

  constructor(
    private readonly db: LedgerDb,
    private readonly witnesses: WitnessSet,
    private readonly log: Logger,
    private readonly intervalMs = 0,
  ) {}

  poke(): void {
    if (this.#closed) return
    if (this.#running) {
      this.#again = true
      return
    }
    if (this.#spaced) return
    const wait = this.#lastStart + this.intervalMs - Date.now()
    if (wait > 0)
      this.#spaced = setTimeout(() => {
        this.#spaced = undefined
        this.poke()
      }, wait).unref()
    else void this.#round()
  }

  close(): void {
    this.#closed = true
    clearTimeout(this.#retry)
    clearTimeout(this.#spaced)
  }

  async #round(): Promise<void> {
    this.#running = true
    clearTimeout(this.#retry)
    let failed = false
    try {
      do {
        if (this.#again) await this.#spacing()
        if (this.#closed) break
        this.#again = false
        this.#lastStart = Date.now()
        failed = false
        let targets: WitnessTarget[] = []
        try {
          targets = await this.witnesses.targets()
        } catch (err) {
          failed = true
          // at a development start the idp comes up after the ledger: said quietly at first
          const level = this.#failures < 4 ? 'info' : 'warn'
          this.log[level]({ err: (err as Error).message }, 'witnesses not found yet')
        }
        for (const target of targets)
          try {
            await this.#push(target)
          } catch (err) {
            failed = true
            this.log.warn({ err: (err as Error).message, witness: target.prefix }, 'witness did not cosign')
          }
      } while (this.#again && !this.#closed)
    } finally {
      this.#running = false
    }
    this.#failures = failed ? this.#failures + 1 : 0
    if (failed && !this.#closed) {
      const delay = Math.min(MAX_RETRY_DELAY_MS, 1000 * 2 ** this.#failures)
      this.#retry = setTimeout(() => this.poke(), delay).unref()
    }
  }

  /** Waits out what is left of the interval since the last round began. */
  #spacing(): Promise<void> {
    const wait = this.#lastStart + this.intervalMs - Date.now()
    return wait > 0 ? new Promise((resolve) => setTimeout(resolve, wait).unref()) : Promise.resolve()
  }

  async #push(target: WitnessTarget): Promise<void> {
    const latest = await latestSignedCheckpoint(this.db)
    if (!latest || latest.size === 0 || !target.prefix) return
    const name = cosignatureVerifierFromKey(target.verifierKey).name
    let old = await sizeCosignedBy(this.db, name)
    if (old === latest.size) return
    for (let conflicts = 0; conflicts <= MAX_CONFLICTS; conflicts++) {
      const proof = old === 0 ? [] : await consistencyProof(old, latest.size, nodeReader(this.db))
      const res = await fetch(`${target.prefix}/add-checkpoint`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        body: formatAddCheckpoint({ oldSize: old, proof, note: latest.note }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
      const text = await res.text()
      if (res.ok) {
        await acceptCosignatures(this.db, [target.verifierKey], `${latest.note}${text}`)
        return
      }
      if (res.status !== 409 || !res.headers.get('content-type')?.startsWith(TLOG_SIZE_CONTENT_TYPE))
        throw new Error(`the witness answered ${res.status}: ${text.slice(0, 300)}`)
      const theirs = parseTlogSize(text)
      // another instance of this log had it cosigned in the meantime
      if (theirs === latest.size) return
      if (theirs > latest.size)
        throw new Error(
          `the witness has cosigned size ${theirs}, beyond this log's latest ${latest.size}: a fork, or lost log data`,
        )
      old = theirs
    }
    throw new Error('the witness kept answering 409')
  }
}
