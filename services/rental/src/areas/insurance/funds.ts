import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money } from '@svc/kit'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor } from '../events/index.ts'
import type { InsuranceDeps } from './service.ts'
import * as store from './store.ts'

/** The insurance pool: premiums in, claims out. A platform account: it never goes below zero. */
export const POOL = 'platform:insurance'
/** The platform's reserve behind the pool, funded from fees by an operator; never below zero either. */
export const RESERVE = 'platform:insurance_reserve'
/** The platform's fees, where the reserve is funded from. */
export const FEES = 'platform:fees'

/**
 * What the insurance funds hold and owe: pool + reserve, the coverage still sold (exposure), and
 * what is left to back new coverage. The platform sells only coverage it can pay in full.
 */
export async function fundsOf(deps: InsuranceDeps, db: RentalDb) {
  const pool = await deps.ctx.rail.balance(db, POOL)
  const reserve = await deps.ctx.rail.balance(db, RESERVE)
  const exposure = await store.exposure(db, deps.ctx.now())
  return { pool, reserve, exposure, available: Math.max(0, pool + reserve - exposure) }
}

const aed = (fils: number) => money(fils, 'AED', 'en').display

/** Why the platform cannot back `coverage` more, in words (or undefined when it can). */
export function unbacked(funds: Awaited<ReturnType<typeof fundsOf>>, coverage: number) {
  if (coverage <= funds.available) return undefined
  return (
    `the platform's insurance funds hold ${aed(funds.pool + funds.reserve)} and the cover it has sold still ` +
    `needs ${aed(funds.exposure)}: ` +
    (funds.available > 0
      ? `it can back ${aed(funds.available)} more, not ${aed(coverage)}`
      : 'it can back no more cover') +
    ', so it declines this cover now'
  )
}

export function fundsView(funds: Awaited<ReturnType<typeof fundsOf>>, fees: number, locale: MoneyLocale) {
  const m = (fils: number) => money(fils, 'AED', locale)
  return {
    pool: m(funds.pool),
    reserve: m(funds.reserve),
    exposure: m(funds.exposure),
    available: m(funds.available),
    fees: m(fees),
  }
}

/** The operator's view of the insurance funds (403 for anyone else). */
export async function operatorFunds(deps: InsuranceDeps, operator: boolean, locale: MoneyLocale) {
  if (!operator) throw rentalError('forbidden', 'only an operator sees the platform’s insurance funds')
  const db = deps.ctx.db
  return fundsView(await fundsOf(deps, db), await deps.ctx.rail.balance(db, FEES), locale)
}

/**
 * An operator moves fees into the reserve: a balanced transfer platform:fees → the reserve (kind
 * `reserve_funding`, key `reserve-funding:<Idempotency-Key or a new id>`); 409 insufficient_funds
 * when the fees hold less. The only way money enters the reserve.
 */
export async function fundReserve(
  deps: InsuranceDeps,
  operator: boolean,
  amount: number,
  key: string | undefined,
  actor: Actor,
  locale: MoneyLocale,
) {
  if (!operator) throw rentalError('forbidden', 'only an operator funds the platform’s insurance reserve')
  let transfer
  try {
    transfer = await inTransaction(deps.ctx.db, (trx) =>
      deps.ctx.rail.transfer(trx, {
        idempotencyKey: `reserve-funding:${key ?? randomUUID()}`,
        kind: 'reserve_funding',
        postings: [
          { account: FEES, amount: -amount },
          { account: RESERVE, amount },
        ],
        memo: { by: actor.id },
      }),
    )
  } catch (err) {
    if ((err as { code?: string }).code === 'insufficient_funds')
      throw rentalError(
        'insufficient_funds',
        `the platform's fees hold ${aed(Math.max(0, await deps.ctx.rail.balance(deps.ctx.db, FEES)))}, less than ${aed(amount)}`,
      )
    throw err
  }
  const db = deps.ctx.db
  return {
    transfer_id: transfer.id,
    funds: fundsView(await fundsOf(deps, db), await deps.ctx.rail.balance(db, FEES), locale),
  }
}
