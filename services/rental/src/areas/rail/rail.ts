import type { RentalDb } from '../../db.ts'

export interface Posting {
  /** `wallet:<client>`, `escrow:<escrow id>`, `payout:<agent did>`, `platform:fees`, `external:funding`. */
  account: string
  /** Integer fils; positive credits the account, negative debits it. A transfer's postings sum to zero. */
  amount: number
}

export interface TransferRequest {
  /** The transfer happens once per key: a retry with the same request gets the first transfer back. */
  idempotencyKey: string
  kind: string
  postings: Posting[]
  memo?: Record<string, unknown>
}

export interface Transfer {
  id: string
  idempotency_key: string
  kind: string
  postings: Posting[]
  created_at: string
  /** True when this answer is the first transfer's, given again for a repeated key. */
  replayed: boolean
}

/**
 * The payment rail, the seam for an external provider. The built-in rail is a double-entry
 * journal in the rental's database, so a transfer commits with the caller's transaction. An
 * external adapter would pass the same idempotency key to its provider (as Stripe's
 * `Idempotency-Key`) from a job enqueued in that transaction, so a crash between the two
 * retries the call and the provider pays once.
 */
export interface PaymentRail {
  readonly name: string
  transfer(trx: RentalDb, request: TransferRequest): Promise<Transfer>
  balance(db: RentalDb, account: string): Promise<number>
  /** The sum of these accounts' balances as it stood just before `at` (a statement's opening and closing). */
  balanceBefore(db: RentalDb, accounts: string[], at: Date): Promise<number>
  /** The transfers in [from, to) posting to any of these accounts, oldest first, with all their postings. */
  transfersTouching(db: RentalDb, accounts: string[], from: Date, to: Date): Promise<RailMovement[]>
}

/** A transfer as a statement reads it. */
export interface RailMovement {
  id: string
  kind: string
  memo: Record<string, unknown>
  created_at: Date
  postings: Posting[]
}
