import { money, type MoneyLocale } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import { type EngagementService, walletOf } from '../engagements/index.ts'
import type { RailMovement } from '../rail/index.ts'
import type { RefundService } from '../refunds/index.ts'
import type { SlaService } from '../sla/index.ts'
import type { TaskService } from '../tasks/index.ts'

export interface StatementDeps extends RentalContext {
  engagements: EngagementService
  tasks: TaskService
  refunds: RefundService
  sla: SlaService
}

/** The longest period one statement covers. */
export const MAX_DAYS = 366
const DAY_MS = 86_400_000

export const LINE_KINDS = ['funding', 'escrow_hold', 'release', 'fee', 'vat', 'refund', 'adjustment'] as const
export type LineKind = (typeof LINE_KINDS)[number]

export interface Receipt {
  type: 'escrow.released' | 'task.completed' | 'refund.settled' | 'sla.credited'
  leaf_hash: string
}

/** One statement line, in fils (the routes add the money objects). */
export interface Line {
  transfer_id: string
  transfer_kind: string
  kind: LineKind
  at: Date
  /** The change to `wallet:<org>` (signed). */
  wallet_fils: number
  /** The change to the organization's escrows (`escrow:<id>`, money held for its tasks). */
  held_fils: number
  counter_account: string | null
  counter_account_kind: string | null
  escrow_id: string | null
  escrow_hash: string | null
  engagement_id: string | null
  task_id: string | null
  receipts: Receipt[]
  /** A refund line's refund, its signed body's hash and its credit note. */
  refund: { id: string; hash: string | null; credit_note: { id: string; number: string } | null } | null
  /** An SLA credit line's credit: the breach it credits (the log's sla.breached event id) and its term. */
  sla_credit: { id: string; breach_event_id: string; term: string } | null
}

export interface Statement {
  from: Date
  to: Date
  opening: { wallet: number; held: number }
  closing: { wallet: number; held: number }
  lines: Line[]
}

/** `from`/`to` of the query: ISO 8601 dates or date-times; the default is the current calendar month (UTC). */
export function periodOf(now: Date, query: { from?: string | undefined; to?: string | undefined }) {
  const parse = (field: 'from' | 'to', value: string) => {
    if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value))
      throw rentalError('invalid_period', `${field} is not an ISO 8601 date or date-time with an offset`)
    const at = new Date(value)
    if (Number.isNaN(at.getTime()) || (value.length === 10 && at.toISOString().slice(0, 10) !== value))
      throw rentalError('invalid_period', `${field} is not a valid date`)
    return at
  }
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const from = query.from !== undefined ? parse('from', query.from) : monthStart
  const to =
    query.to !== undefined
      ? parse('to', query.to)
      : query.from !== undefined
        ? new Date(
            Math.min(
              from.getTime() + MAX_DAYS * DAY_MS,
              Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
            ),
          )
        : new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
  if (to <= from)
    throw rentalError(
      'invalid_period',
      query.to === undefined ? 'from is after the current month: give to as well' : 'to must be after from',
    )
  if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS)
    throw rentalError('invalid_period', `the period from … to spans at most ${MAX_DAYS} days`)
  return { from, to }
}

const kindOfAccount = (account: string) => account.slice(0, account.indexOf(':'))

function classify(transfer: RailMovement, counter: string | null, walletFils: number): LineKind {
  if (/refund/.test(transfer.kind)) return 'refund'
  // an SLA credit pays back from the payout and the fee: an adjustment, not a release
  if (transfer.kind === 'sla_credit') return 'adjustment'
  if (counter === null) return walletFils < 0 ? 'escrow_hold' : 'adjustment'
  const kind = kindOfAccount(counter)
  if (kind === 'external' && walletFils > 0) return 'funding'
  if (kind === 'payout') return 'release'
  // the VAT inside a release, payable by the platform (prices are VAT-inclusive)
  if (counter === 'platform:vat') return 'vat'
  if (kind === 'platform') return 'fee'
  return 'adjustment'
}

/**
 * The organization's statement for [from, to): the rail's transfers that post to its wallet or
 * to one of its escrows, one line per counter-account (a release is two: the payout and the fee),
 * with the escrow, engagement and task they concern and the receipts that back them.
 */
export async function statementOf(
  deps: StatementDeps,
  orgId: string,
  period: { from: Date; to: Date },
): Promise<Statement> {
  const wallet = walletOf(orgId)
  const escrows = new Map(
    (await deps.engagements.openedEscrowsOfOrg(orgId)).map((e) => [`escrow:${e.id}`, e]),
  )
  const held = [...escrows.keys()]
  const { rail, db } = deps
  const [openingWallet, openingHeld, closingWallet, closingHeld, transfers] = await Promise.all([
    rail.balanceBefore(db, [wallet], period.from),
    rail.balanceBefore(db, held, period.from),
    rail.balanceBefore(db, [wallet], period.to),
    rail.balanceBefore(db, held, period.to),
    rail.transfersTouching(db, [wallet, ...held], period.from, period.to),
  ])
  const taskIds = [...escrows.values()].flatMap((e) => (e.task_id ? [e.task_id] : []))
  const taskReceipts = new Map(
    (await deps.tasks.completed(taskIds)).flatMap((t) =>
      t.receipt_leaf_hash ? [[t.id, t.receipt_leaf_hash]] : [],
    ),
  )
  const refunds = await deps.refunds.settledByTransfers(transfers.map((t) => t.id))
  const credits = await deps.sla.creditsByTransfers(
    transfers.filter((t) => t.kind === 'sla_credit').map((t) => t.id),
  )
  const lines: Line[] = []
  for (const transfer of transfers) {
    const ours = transfer.postings.filter((p) => p.account === wallet || escrows.has(p.account))
    const others = transfer.postings.filter((p) => !ours.includes(p))
    const walletFils = ours.find((p) => p.account === wallet)?.amount ?? 0
    const heldFils = ours.filter((p) => p.account !== wallet).reduce((sum, p) => sum + p.amount, 0)
    // a refund's reversal posts to the wallet only: its escrow is the refund's
    const refund = refunds.get(transfer.id)
    const escrow =
      ours.map((p) => escrows.get(p.account)).find((e) => e !== undefined) ??
      (refund ? escrows.get(`escrow:${refund.escrow_id}`) : undefined)
    const credit = credits.get(transfer.id)
    const released = (escrow?.release_answer as { receipt?: { leaf_hash?: string } } | null)?.receipt
      ?.leaf_hash
    const line = (counter: string | null, wallet_fils: number, held_fils: number): Line => {
      const kind = classify(transfer, counter, wallet_fils)
      const taskLeaf = escrow?.task_id ? taskReceipts.get(escrow.task_id) : undefined
      const receipts: Receipt[] = []
      const paidOut = kind === 'release' || kind === 'fee' || kind === 'vat'
      if (paidOut && released) receipts.push({ type: 'escrow.released', leaf_hash: released })
      if (paidOut && taskLeaf) receipts.push({ type: 'task.completed', leaf_hash: taskLeaf })
      if (kind === 'refund' && refund?.receipt_leaf_hash)
        receipts.push({ type: 'refund.settled', leaf_hash: refund.receipt_leaf_hash })
      if (credit) receipts.push({ type: 'sla.credited', leaf_hash: credit.receipt_leaf_hash })
      return {
        transfer_id: transfer.id,
        transfer_kind: transfer.kind,
        kind,
        at: transfer.created_at,
        wallet_fils,
        held_fils,
        counter_account: counter,
        counter_account_kind: counter ? kindOfAccount(counter) : null,
        escrow_id: escrow?.id ?? refund?.escrow_id ?? null,
        escrow_hash: escrow?.hash ?? null,
        engagement_id: escrow?.engagement_id ?? refund?.engagement_id ?? credit?.engagement_id ?? null,
        task_id: escrow?.task_id ?? refund?.task_id ?? null,
        receipts,
        refund: refund
          ? { id: refund.refund_id, hash: refund.refund_hash, credit_note: refund.credit_note }
          : null,
        sla_credit: credit ? { id: credit.id, breach_event_id: credit.event_id, term: credit.term } : null,
      }
    }
    if (others.length === 0) lines.push(line(null, walletFils, heldFils))
    else if (walletFils !== 0 && heldFils !== 0)
      lines.push({ ...line(null, walletFils, heldFils), kind: 'adjustment' })
    else
      for (const p of others)
        lines.push(line(p.account, walletFils !== 0 ? -p.amount : 0, heldFils !== 0 ? -p.amount : 0))
  }
  return {
    ...period,
    opening: { wallet: openingWallet, held: openingHeld },
    closing: { wallet: closingWallet, held: closingHeld },
    lines,
  }
}

/**
 * The engagement's lines of its organization's statement, from its hire to `to` (the export): the
 * wallet's and escrows' movements that concern it (holds, releases and fees, returns, refunds),
 * with the receipts that back them. The organization-wide opening and closing balances are not
 * the engagement's, so they are left out.
 */
export async function engagementStatement(
  deps: StatementDeps,
  orgId: string,
  engagement: { id: string; created_at: Date },
  to: Date,
) {
  const from = engagement.created_at
  const s = await statementOf(deps, orgId, { from, to })
  const view = statementView(
    orgId,
    { ...s, lines: s.lines.filter((l) => l.engagement_id === engagement.id) },
    'en',
  )
  return {
    engagement_id: engagement.id,
    currency: view.currency,
    from: view.from,
    to: view.to,
    movements: view.movements,
    totals: view.totals,
  }
}

/** The statement as the API answers it: every amount a money object in `locale`. */
export function statementView(orgId: string, s: Statement, locale: MoneyLocale) {
  const m = (fils: number) => money(fils, 'AED', locale)
  const totals = Object.fromEntries(
    LINE_KINDS.map((kind) => {
      const of = s.lines.filter((l) => l.kind === kind)
      return [
        kind,
        {
          count: of.length,
          wallet: m(of.reduce((sum, l) => sum + l.wallet_fils, 0)),
          held: m(of.reduce((sum, l) => sum + l.held_fils, 0)),
        },
      ]
    }),
  ) as Record<LineKind, { count: number; wallet: ReturnType<typeof m>; held: ReturnType<typeof m> }>
  const sum = (key: 'wallet_fils' | 'held_fils') => s.lines.reduce((acc, l) => acc + l[key], 0)
  return {
    organization_id: orgId,
    account: walletOf(orgId),
    currency: 'AED',
    from: s.from.toISOString(),
    to: s.to.toISOString(),
    opening: { wallet: m(s.opening.wallet), held: m(s.opening.held) },
    closing: { wallet: m(s.closing.wallet), held: m(s.closing.held) },
    movements: s.lines.map((l) => ({ ...lineFields(l), wallet: m(l.wallet_fils), held: m(l.held_fils) })),
    totals,
    reconciles:
      s.opening.wallet + sum('wallet_fils') === s.closing.wallet &&
      s.opening.held + sum('held_fils') === s.closing.held,
  }
}

function lineFields(l: Line) {
  return {
    transfer_id: l.transfer_id,
    transfer_kind: l.transfer_kind,
    kind: l.kind,
    at: l.at.toISOString(),
    counter_account: l.counter_account,
    counter_account_kind: l.counter_account_kind,
    escrow_id: l.escrow_id,
    escrow_hash: l.escrow_hash,
    engagement_id: l.engagement_id,
    task_id: l.task_id,
    receipts: l.receipts,
    refund: l.refund,
    sla_credit: l.sla_credit,
  }
}
