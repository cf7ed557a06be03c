import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money, type Page, VAT_RATE_BPS } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { OrgService } from '../orgs/index.ts'
import * as store from './store.ts'
import type { CreditNoteRow, InvoiceLineRow, InvoiceRow } from './store.ts'
import { creditNoteSummary } from './credit-notes.ts'

export interface InvoiceDeps {
  ctx: Pick<RentalContext, 'db' | 'receipts' | 'config' | 'now'>
  engagements: EngagementService
  events: EventService
  orgs: OrgService
}

/** The issuer of every invoice: the platform (its counter row in `invoice_counters`). */
export const ISSUER = 'platform'
/** The `paid_reference` of an invoice its escrows' releases paid when it was issued. */
export const PAID_BY_ESCROW = 'escrow'

/** The invoices' sequence (`INV-2026-000001`): gapless within the year of issue. */
const INVOICE_SEQUENCE = { issuer: ISSUER, prefix: 'INV' } as const

export type InvoiceScope = { engagement_id: string } | { from: string; to: string }

function scopeOf(input: {
  engagement_id?: string
  from?: string
  to?: string
}): { engagementId: string } | { from: Date; to: Date } {
  const period = input.from !== undefined || input.to !== undefined
  if (input.engagement_id !== undefined && period)
    throw rentalError('invalid_request', 'body: give engagement_id or from and to, not both')
  if (input.engagement_id !== undefined) return { engagementId: input.engagement_id }
  if (input.from === undefined)
    throw rentalError('invalid_request', 'body.from is required (or engagement_id)')
  if (input.to === undefined) throw rentalError('invalid_request', 'body.to is required (or engagement_id)')
  const from = new Date(input.from)
  const to = new Date(input.to)
  if (Number.isNaN(from.getTime())) throw rentalError('invalid_request', 'body.from is not a date-time')
  if (Number.isNaN(to.getTime())) throw rentalError('invalid_request', 'body.to is not a date-time')
  if (to <= from) throw rentalError('invalid_request', 'body.to must be after body.from')
  return { from, to }
}

/** The organization's name and the scope, checked before any transaction (they read the pool). */
async function prepare(
  deps: InvoiceDeps,
  orgId: string,
  input: { engagement_id?: string; from?: string; to?: string },
) {
  const scope = scopeOf(input)
  if ('engagementId' in scope && !(await deps.engagements.engagementOf(orgId, scope.engagementId)))
    throw rentalError('engagement_not_found', `no engagement ${scope.engagementId}`)
  const [org] = await deps.orgs.orgs([orgId])
  return { scope, orgName: org?.name ?? orgId }
}

/** The unique escrow_id of invoice_lines: another creation took one of these escrows first. */
async function takenMeanwhileAs409<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if ((error as { code?: unknown }).code === '23505')
      throw rentalError('nothing_to_invoice', 'these escrows were just invoiced by another request')
    throw error
  }
}

/**
 * `POST /api/invoices`: issues an invoice for the organization's released escrows of a period or
 * an engagement that are on no invoice yet, in one transaction: the issuer's number first (the
 * counter row's lock makes concurrent creations take turns, so each then sees the lines the one
 * before took), the lines (one per escrow: its amount is the gross, VAT-inclusive, the VAT the
 * share its release posted to platform:vat), the totals (sums of the lines), an `invoice.issued`
 * event. The releases paid the lines already: the invoice is issued `paid` (by `escrow`, on the
 * last release), with nothing due. Nothing to invoice: 409, and the number goes back with the
 * rollback. Its Idempotency-Key is the route's (http/route.ts `idempotent`).
 */
export async function createInvoice(
  deps: InvoiceDeps,
  orgId: string,
  input: { engagement_id?: string; from?: string; to?: string },
  actor: Actor,
  locale: MoneyLocale = 'en',
): Promise<InvoiceView> {
  const { scope, orgName } = await prepare(deps, orgId, input)
  const id = await takenMeanwhileAs409(() =>
    inTransaction(deps.ctx.db, (trx) => issueInvoice(deps, trx, orgId, orgName, scope, actor)),
  )
  return readInvoice(deps.ctx.db, orgId, id, locale)
}

async function issueInvoice(
  deps: InvoiceDeps,
  trx: RentalDb,
  orgId: string,
  orgName: string,
  scope: ReturnType<typeof scopeOf>,
  actor: Actor,
) {
  const issuer = deps.ctx.config.invoiceIssuer
  const issuedAt = deps.ctx.now()
  const year = issuedAt.getUTCFullYear()
  const number = await store.nextNumber(trx, INVOICE_SEQUENCE, year)
  const released = await deps.engagements.releasedEscrows(trx, orgId, scope)
  const taken = await store.invoicedEscrows(
    trx,
    released.map((e) => e.id),
  )
  const open = released.filter((e) => !taken.has(e.id))
  if (open.length === 0)
    throw rentalError('nothing_to_invoice', 'no released escrow here that is not on an invoice already')
  const id = `inv_${randomUUID().replaceAll('-', '')}`
  const lines = open.map((e, i) => {
    const gross = Number(e.amount_fils)
    const vat = Number(e.vat_fils ?? 0)
    return {
      invoice_id: id,
      position: i + 1,
      escrow_id: e.id,
      engagement_id: e.engagement_id,
      task_id: e.task_id,
      description: `${e.job_id}${e.task_id ? ` (task ${e.task_id})` : ''}`,
      agent_did: e.agent_did,
      net_fils: gross - vat,
      fee_fils: Number(e.fee_fils ?? 0),
      vat_fils: vat,
      gross_fils: gross,
      released_at: e.released_at!,
      transfer_id: e.release_transfer_id,
    }
  })
  const sum = (key: 'net_fils' | 'vat_fils') => lines.reduce((total, l) => total + l[key], 0)
  const net = sum('net_fils')
  const vat = sum('vat_fils')
  const paidAt = new Date(Math.max(...lines.map((l) => l.released_at.getTime())))
  await store.insertInvoice(
    trx,
    {
      id,
      org_id: orgId,
      issuer: ISSUER,
      number,
      engagement_id: 'engagementId' in scope ? scope.engagementId : null,
      period_from: 'from' in scope ? scope.from : null,
      period_to: 'to' in scope ? scope.to : null,
      net_fils: net,
      vat_fils: vat,
      gross_fils: net + vat,
      vat_rate_bps: VAT_RATE_BPS,
      issuer_details: JSON.stringify({ name: issuer.name, address: issuer.address, trn: issuer.trn }),
      client_details: JSON.stringify({ org_id: orgId, name: orgName }),
      issued_at: issuedAt,
      // nothing is due: the releases paid it
      due_at: issuedAt,
      state: 'paid',
      vat_inclusive: true,
      paid_reference: PAID_BY_ESCROW,
      paid_at: paidAt,
      paid_by: actor.id ?? actor.type,
      paid_receipt_id: null,
      created_by: actor.id,
    },
    lines,
  )
  await deps.events.record(trx, {
    orgId,
    type: 'invoice.issued',
    subjects: { invoice_id: id },
    actor,
    data: {
      number,
      net_fils: net,
      vat_fils: vat,
      gross_fils: net + vat,
      currency: 'AED',
      lines: lines.length,
      state: 'paid',
      paid_by: PAID_BY_ESCROW,
      transfer_ids: lines.map((l) => l.transfer_id),
    },
  })
  return id
}

/**
 * What paid the invoice, oldest first: each line's release from its escrow; each refund paid back
 * to the wallet (negative) with its credit note; a payment marked with a reference (an invoice of
 * VAT on top, before 0053: what the releases did not pay). Fils.
 */
function paymentsOf(row: InvoiceRow, lines: InvoiceLineRow[], credits: CreditNoteRow[]) {
  const releases = lines.map((l) => ({
    kind: 'escrow_release' as const,
    at: l.released_at,
    amount: Number(row.vat_inclusive ? l.gross_fils : l.net_fils),
    escrow_id: l.escrow_id as string | null,
    transfer_id: l.transfer_id,
    refund_id: null as string | null,
    credit_note: null as string | null,
    reference: null as string | null,
  }))
  const refunds = credits.map((c) => ({
    kind: 'refund' as const,
    at: c.issued_at,
    amount: -Number(c.vat_inclusive ? c.gross_fils : c.net_fils),
    escrow_id: c.escrow_id as string | null,
    transfer_id: c.transfer_id,
    refund_id: c.refund_id as string | null,
    credit_note: c.number as string | null,
    reference: null,
  }))
  const byEscrow = releases.reduce((sum, p) => sum + p.amount, 0)
  const marked =
    row.paid_at && row.paid_reference && row.paid_reference !== PAID_BY_ESCROW
      ? [
          {
            kind: 'marked' as const,
            at: row.paid_at,
            amount: Number(row.gross_fils) - byEscrow,
            escrow_id: null,
            transfer_id: null,
            refund_id: null,
            credit_note: null,
            reference: row.paid_reference as string | null,
          },
        ]
      : []
  return [...releases, ...refunds, ...marked].sort((a, b) => a.at.getTime() - b.at.getTime())
}

/**
 * A stored invoice as the API shows it, amounts as money in the reader's locale. Its balance is
 * what is still owed: the gross, less its credit notes, less what paid it (payments).
 */
export function invoiceView(
  row: InvoiceRow,
  lines: InvoiceLineRow[],
  locale: MoneyLocale = 'en',
  credits: CreditNoteRow[] = [],
) {
  const m = (fils: number | string) => money(Number(fils), row.currency, locale)
  const payments = paymentsOf(row, lines, credits)
  return {
    id: row.id,
    number: row.number,
    state: row.state,
    issuer: row.issuer_details as { name: string; address: string; trn: string },
    client: row.client_details as { org_id: string; name: string },
    engagement_id: row.engagement_id,
    period:
      row.period_from && row.period_to
        ? { from: row.period_from.toISOString(), to: row.period_to.toISOString() }
        : null,
    issued_at: row.issued_at.toISOString(),
    due_at: row.due_at.toISOString(),
    currency: row.currency,
    vat_rate_percent: row.vat_rate_bps / 100,
    lines: lines.map((l) => ({
      position: l.position,
      description: l.description,
      escrow_id: l.escrow_id,
      engagement_id: l.engagement_id,
      task_id: l.task_id,
      agent_did: l.agent_did,
      released_at: l.released_at.toISOString(),
      net: m(l.net_fils),
      vat: m(l.vat_fils),
      gross: m(l.gross_fils),
      platform_fee: m(l.fee_fils),
    })),
    totals: { net: m(row.net_fils), vat: m(row.vat_fils), gross: m(row.gross_fils) },
    paid: row.paid_at ? { reference: row.paid_reference!, paid_at: row.paid_at.toISOString() } : null,
    credit_notes: credits.map((c) => creditNoteSummary(c, locale)),
    payments: payments.map((p) => ({ ...p, at: p.at.toISOString(), amount: m(p.amount) })),
    balance: m(
      Number(row.gross_fils) -
        credits.reduce((sum, c) => sum + Number(c.gross_fils), 0) -
        payments.reduce((sum, p) => sum + p.amount, 0),
    ),
  }
}
export type InvoiceView = ReturnType<typeof invoiceView>

export const invoiceOf = (deps: InvoiceDeps, orgId: string, id: string, locale: MoneyLocale = 'en') =>
  readInvoice(deps.ctx.db, orgId, id, locale)

/** The organization's invoice with its lines and credit notes, read in `db` (a transaction or the pool). */
async function readInvoice(db: RentalDb, orgId: string, id: string, locale: MoneyLocale) {
  const row = await store.invoiceOf(db, orgId, id)
  if (!row) throw rentalError('invoice_not_found', `no invoice ${id}`)
  return invoiceView(row, await store.linesOf(db, [id]), locale, await store.creditNotesOfInvoices(db, [id]))
}

export async function invoiceList(deps: InvoiceDeps, orgId: string, page: Page, locale: MoneyLocale = 'en') {
  const { rows, total } = await store.invoicesOf(deps.ctx.db, orgId, page.limit, page.offset)
  const lines = await store.linesOf(
    deps.ctx.db,
    rows.map((r) => r.id),
  )
  const credits = await store.creditNotesOfInvoices(
    deps.ctx.db,
    rows.map((r) => r.id),
  )
  return {
    invoices: rows.map((r) =>
      invoiceView(
        r,
        lines.filter((l) => l.invoice_id === r.id),
        locale,
        credits.filter((c) => c.on_invoice === r.id),
      ),
    ),
    total,
    limit: page.limit,
    offset: page.offset,
  }
}

/**
 * Records the payment of an issued invoice, once: the row locked; paid with the same reference →
 * the same answer again; paid with another → 409 `invoice_paid`; else marked paid with an
 * `invoice.paid` receipt and event in the same transaction. `operator`: the caller is one of the
 * platform's operators, who may mark any organization's invoice paid (the event is that
 * organization's, the operator its actor).
 */
export async function markPaid(
  deps: InvoiceDeps,
  callerOrgId: string,
  id: string,
  input: { reference: string; paid_at?: string },
  actor: Actor,
  operator = false,
  locale: MoneyLocale = 'en',
) {
  let orgId = callerOrgId
  const paidAt = input.paid_at === undefined ? deps.ctx.now() : new Date(input.paid_at)
  if (Number.isNaN(paidAt.getTime())) throw rentalError('invalid_request', 'body.paid_at is not a date-time')
  await inTransaction(deps.ctx.db, async (trx: RentalDb) => {
    const row = await store.invoiceOf(trx, operator ? null : orgId, id, true)
    if (!row) throw rentalError('invoice_not_found', `no invoice ${id}`)
    orgId = row.org_id
    if (row.state === 'paid') {
      if (row.paid_reference === input.reference) return
      throw rentalError(
        'invoice_paid',
        row.paid_reference === PAID_BY_ESCROW
          ? 'the invoice is paid by its escrows’ releases (see its payments): state paid'
          : `the invoice is paid (reference ${row.paid_reference}): state paid`,
      )
    }
    const data = {
      invoice_id: id,
      number: row.number,
      org_id: orgId,
      gross_fils: Number(row.gross_fils),
      currency: row.currency,
      reference: input.reference,
      paid_at: paidAt.toISOString(),
    }
    const receipt = await deps.ctx.receipts.record(trx, { type: 'invoice.paid', subject: id, data })
    await store.markPaid(trx, id, {
      reference: input.reference,
      at: paidAt,
      by: actor.id ?? actor.type,
      receiptId: receipt.id,
    })
    await deps.events.record(trx, {
      orgId,
      type: 'invoice.paid',
      subjects: { invoice_id: id },
      actor,
      data: { ...data, receipt_id: receipt.id },
    })
  })
  return invoiceOf(deps, orgId, id, locale)
}
