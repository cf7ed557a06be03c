import { rentalError } from '../../errors.ts'
import type { Posting } from './rail.ts'

/**
 * The rail's rule of money: inside the platform money only moves (every transfer balances); it
 * enters or leaves only through the named external accounts below, each by the transfer kinds
 * named here and only against the kind of account named here. Only `external:funding` may go
 * below zero (its balance is minus all the money ever funded); every other account, external or
 * not, is refused a transfer that would take it below zero. An `external:` account not named here
 * is refused: it cannot be a source of money. docs/money.md tells the whole model.
 */
export interface ExternalRule {
  /** True only for the one source of outside money: its balance is minus what was ever funded. */
  mayGoNegative: boolean
  /** The transfer kinds that may take money out of it (create money inside the platform). */
  debitKinds: readonly string[]
  /** The transfer kinds that may put money into it (money leaving the platform). */
  creditKinds: readonly string[]
  /** The kind of account on the other side of each of its transfers. */
  counterpart: 'wallet' | 'payout'
}

export const EXTERNAL_ACCOUNTS: Readonly<Record<string, ExternalRule>> = {
  // a client's wallet funded: the demo grant in development, a funding provider's webhook in
  // production; and the way back (a wallet's money returned to where it came from)
  'external:funding': {
    mayGoNegative: true,
    debitKinds: ['wallet_grant', 'wallet_funding'],
    creditKinds: ['wallet_withdrawal'],
    counterpart: 'wallet',
  },
  // a provider's earnings paid out to its bank: only from a payout account, never into the platform
  'external:payouts': {
    mayGoNegative: false,
    debitKinds: [],
    creditKinds: ['provider_payout'],
    counterpart: 'payout',
  },
}

/** Whether the account may hold a negative balance (only the funding source). */
export const mayGoNegative = (account: string) => EXTERNAL_ACCOUNTS[account]?.mayGoNegative === true

const refused = (message: string) => rentalError('transfer_not_allowed', message)

/** Refuses (409 transfer_not_allowed, before anything is written) a transfer the rule does not allow. */
export function checkExternal(kind: string, postings: Posting[]) {
  const external = postings.filter((p) => p.account.startsWith('external:'))
  if (external.length === 0) return
  if (external.length > 1) throw refused('a transfer touches at most one external account')
  const [outside] = external as [Posting]
  const rule = EXTERNAL_ACCOUNTS[outside.account]
  if (!rule)
    throw refused(
      `${outside.account} is not a source or sink of money: only ${Object.keys(EXTERNAL_ACCOUNTS).join(', ')} are`,
    )
  const allowed = outside.amount < 0 ? rule.debitKinds : rule.creditKinds
  if (!allowed.includes(kind))
    throw refused(
      `a ${kind} transfer may not ${outside.amount < 0 ? 'take money from' : 'put money into'} ${outside.account}` +
        (allowed.length ? ` (only ${allowed.join(', ')})` : ''),
    )
  const other = postings.find((p) => p !== outside && !p.account.startsWith(`${rule.counterpart}:`))
  if (other)
    throw refused(
      `${outside.account} moves money only to or from ${rule.counterpart} accounts, not ${other.account}`,
    )
}
