import { money, type MoneyLocale } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import { walletOf } from '../engagements/index.ts'

/** The most one top-up adds: AED 5,000.00 (a bound on a mistyped amount, not on the wallet). */
export const MAX_TOP_UP_FILS = 500_000
export const CURRENCY = 'AED'

type WalletContext = Pick<RentalContext, 'db' | 'rail' | 'receipts' | 'config'>

/**
 * How a wallet is funded here: `demo` where the demo grant is on (development and tests: money
 * from `external:funding`, labelled demo money), `none` in production until a funding provider is
 * configured (its webhook would post the same transfer kind from the same account).
 */
export const fundingMode = (ctx: Pick<RentalContext, 'config'>) =>
  ctx.config.demoWalletFils > 0 ? ('demo' as const) : ('none' as const)

export async function walletView(ctx: WalletContext, orgId: string, locale: MoneyLocale) {
  const mode = fundingMode(ctx)
  return {
    balance: money(await ctx.rail.balance(ctx.db, walletOf(orgId)), CURRENCY, locale),
    funding: {
      mode,
      max_top_up: mode === 'demo' ? money(MAX_TOP_UP_FILS, CURRENCY, locale) : null,
    },
  }
}

/**
 * A demo top-up: one `wallet_funding` transfer `external:funding` → `wallet:<org>` (the rail's
 * rule lets money enter only there), keyed by the organization and the request's Idempotency-Key,
 * with a `wallet.funded` receipt in the same transaction. Refused (409 funding_unavailable) where
 * no funding is configured (production without a provider).
 */
export async function topUp(
  ctx: WalletContext,
  orgId: string,
  key: string,
  amountFils: number,
  locale: MoneyLocale,
) {
  if (fundingMode(ctx) !== 'demo')
    throw rentalError(
      'funding_unavailable',
      'no funding provider is configured here: the wallet is funded by the platform’s payment provider',
    )
  return ctx.db.transaction().execute(async (trx) => {
    const transfer = await ctx.rail.transfer(trx, {
      idempotencyKey: `wallet-top-up:${orgId}:${key}`,
      kind: 'wallet_funding',
      postings: [
        { account: 'external:funding', amount: -amountFils },
        { account: walletOf(orgId), amount: amountFils },
      ],
      memo: { reason: 'demo top-up' },
    })
    const receipt = await ctx.receipts.record(trx, {
      type: 'wallet.funded',
      subject: transfer.id,
      data: {
        org_id: orgId,
        transfer_id: transfer.id,
        amount_fils: amountFils,
        currency: CURRENCY,
        source: 'external:funding',
        demo: true,
      },
    })
    return {
      id: transfer.id,
      amount: money(amountFils, CURRENCY, locale),
      demo: true as const,
      receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
      balance: money(await ctx.rail.balance(trx, walletOf(orgId)), CURRENCY, locale),
      created_at: transfer.created_at,
    }
  })
}
