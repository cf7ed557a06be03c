import { createHash, randomBytes } from 'node:crypto'
import { rentalError } from '../../errors.ts'
import { canonicalize } from '@svc/trust/jcs'
import type { RentalDb, RentalTables } from '../../db.ts'
import type { PaymentRail, Posting, RailMovement, Transfer, TransferRequest } from './rail.ts'
import {
  balanceBefore,
  balanceOf,
  ensureAccounts,
  insertPostings,
  insertTransfer,
  lockAccounts,
  postingsOf,
  transferByKey,
  transfersTouching,
} from './store.ts'
import { checkExternal, mayGoNegative } from './rules.ts'

const KINDS = ['wallet', 'escrow', 'payout', 'platform', 'external'] as const

function kindOf(account: string): RentalTables['rail_accounts']['kind'] {
  const kind = account.slice(0, account.indexOf(':'))
  if (!(KINDS as readonly string[]).includes(kind) || account.length > 300)
    throw rentalError('invalid_account', `${account} is not a rail account`)
  return kind as RentalTables['rail_accounts']['kind']
}

function checkBalanced(postings: Posting[]) {
  if (postings.length < 2) throw rentalError('invalid_transfer', 'a transfer needs at least two postings')
  if (new Set(postings.map((p) => p.account)).size !== postings.length)
    throw rentalError('invalid_transfer', 'an account appears twice in a transfer')
  for (const p of postings)
    if (!Number.isSafeInteger(p.amount) || p.amount === 0)
      throw rentalError('invalid_transfer', 'amounts are non-zero integer fils')
  if (postings.reduce((sum, p) => sum + p.amount, 0) !== 0)
    throw rentalError('invalid_transfer', 'the postings of a transfer sum to zero')
}

const digestOf = (request: TransferRequest) =>
  createHash('sha256')
    .update(
      canonicalize({
        kind: request.kind,
        postings: [...request.postings].sort((a, b) => a.account.localeCompare(b.account)),
        memo: request.memo ?? {},
      }),
    )
    .digest('hex')

/** The built-in rail: a double-entry journal in the rental's own database. */
export class JournalRail implements PaymentRail {
  readonly name = 'journal'

  /** Must run inside the caller's transaction: the transfer commits, or not, with what caused it. */
  async transfer(trx: RentalDb, request: TransferRequest): Promise<Transfer> {
    checkBalanced(request.postings)
    checkExternal(request.kind, request.postings)
    const digest = digestOf(request)
    const earlier = await this.#replay(trx, request.idempotencyKey, digest)
    if (earlier) return earlier

    await ensureAccounts(
      trx,
      request.postings.map((p) => ({ id: p.account, kind: kindOf(p.account) })),
    )
    const id = `rtr_${randomBytes(12).toString('base64url')}`
    // the key is claimed first: a concurrent transfer with the same key waits here, then replays
    const row = await insertTransfer(trx, {
      id,
      idempotency_key: request.idempotencyKey,
      kind: request.kind,
      request_digest: digest,
      memo: JSON.stringify(request.memo ?? {}),
    })
    if (!row) return (await this.#replay(trx, request.idempotencyKey, digest))!
    await lockAccounts(
      trx,
      request.postings.map((p) => p.account),
    )
    // the rule, not the row, says which account may go negative (rules.ts: only external:funding)
    for (const p of request.postings.filter((p) => p.amount < 0)) {
      if (mayGoNegative(p.account)) continue
      if ((await balanceOf(trx, p.account)) + p.amount < 0)
        throw rentalError('insufficient_funds', `${p.account} holds less than ${-p.amount} fils`)
    }
    await insertPostings(trx, id, request.postings)
    return {
      id,
      idempotency_key: row.idempotency_key,
      kind: row.kind,
      postings: [...request.postings].sort((a, b) => a.account.localeCompare(b.account)),
      created_at: row.created_at.toISOString(),
      replayed: false,
    }
  }

  balance(db: RentalDb, account: string): Promise<number> {
    return balanceOf(db, account)
  }

  balanceBefore(db: RentalDb, accounts: string[], at: Date): Promise<number> {
    return balanceBefore(db, accounts, at)
  }

  transfersTouching(db: RentalDb, accounts: string[], from: Date, to: Date): Promise<RailMovement[]> {
    return transfersTouching(db, accounts, from, to)
  }

  async #replay(db: RentalDb, key: string, digest: string): Promise<Transfer | undefined> {
    const row = await transferByKey(db, key)
    if (!row) return undefined
    if (row.request_digest !== digest)
      throw rentalError('idempotency_key_reused', 'this idempotency key was used for another transfer')
    return {
      id: row.id,
      idempotency_key: row.idempotency_key,
      kind: row.kind,
      postings: (await postingsOf(db, row.id)).map((p) => ({ account: p.account, amount: Number(p.amount) })),
      created_at: row.created_at.toISOString(),
      replayed: true,
    }
  }
}
