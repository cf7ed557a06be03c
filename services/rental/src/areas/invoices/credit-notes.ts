import { randomUUID } from 'node:crypto'
import { type MoneyLocale, money, type Page, VAT_RATE_BPS, vatShareOf } from '@svc/kit'
import type { RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor } from '../events/index.ts'
import type { InvoiceDeps } from './service.ts'
import * as store from './store.ts'
import type { CreditNoteRow } from './store.ts'

/** The credit notes' own counter in `invoice_counters`: a sequence apart from the invoices'. */
export const CREDIT_NOTE_ISSUER = 'platform-cn'

/** `CN-2026-000001`: the credit notes' sequence within the year of issue. */
const CREDIT_NOTE_SEQUENCE = { issuer: CREDIT_NOTE_ISSUER, prefix: 'CN' } as const

/** What a settled refund credits: the escrow it refunded, for how much, and why. */
export interface CreditNoteInput {
  orgId: string
  /** The client's name as the invoice shows it (read by the caller before its transaction). */
  orgName: string
  refundId: string
  escrowId: string
  engagementId: string
  taskId: string | null
  agentDid: string
  amountFils: number
  /** The transfer that paid the refund back (for a held escrow a dispute settled: that settlement). */
  transferId: string
  reason: string
  actor: Actor
}

/**
 * The VAT a credit of `amount` takes back from an escrow after `before` was credited already: the
 * VAT share (kit vatShareOf) of the running total less that of the total before. So partial credits
 * never take back more VAT than the release posted to platform:vat, and crediting the whole escrow
 * takes back exactly its VAT. An escrow released before VAT was posted (vat_fils null) has none.
 */
export const reversedVatOf = (
  escrow: { amount_fils: number | string; vat_fils: number | string | null },
  before: number,
  amount: number,
) => {
  const whole = Number(escrow.amount_fils)
  const vat = Number(escrow.vat_fils ?? 0)
  return vatShareOf(before + amount, whole, vat) - vatShareOf(before, whole, vat)
}

/** The VAT a credit of `amountFils` against the escrow takes back now (its earlier credit notes read in `trx`). */
export async function creditVatOf(
  deps: InvoiceDeps,
  trx: RentalDb,
  orgId: string,
  escrowId: string,
  amountFils: number,
) {
  const escrow = await deps.engagements.escrowOfOrg(orgId, { escrowId }, { trx })
  if (!escrow) throw new RangeError(`no escrow ${escrowId}`)
  return reversedVatOf(escrow, await store.creditedOf(trx, escrowId), amountFils)
}

/**
 * Issues the credit note of a settled refund in the caller's transaction (the refund's): the next
 * `CN-` number (the counter row locked until the transaction ends, so no gap), one line for the
 * escrow, the invoice that carries it if there is one, a `credit_note.issued` event. Its gross is
 * the refund (prices are VAT-inclusive), its VAT the share creditVatOf gives, which the refund's
 * transfer took back from platform:vat.
 */
export async function issueCreditNote(deps: InvoiceDeps, trx: RentalDb, input: CreditNoteInput) {
  if (!Number.isSafeInteger(input.amountFils) || input.amountFils <= 0)
    throw new RangeError(`credit of ${input.amountFils} fils`)
  const issuedAt = deps.ctx.now()
  const year = issuedAt.getUTCFullYear()
  const number = await store.nextNumber(trx, CREDIT_NOTE_SEQUENCE, year)
  const line = await store.lineOfEscrow(trx, input.escrowId)
  const gross = input.amountFils
  const vat = await creditVatOf(deps, trx, input.orgId, input.escrowId, gross)
  const net = gross - vat
  const issuer = deps.ctx.config.invoiceIssuer
  const id = `cn_${randomUUID().replaceAll('-', '')}`
  await store.insertCreditNote(trx, {
    id,
    org_id: input.orgId,
    issuer: CREDIT_NOTE_ISSUER,
    number,
    refund_id: input.refundId,
    invoice_id: line?.invoice_id ?? null,
    escrow_id: input.escrowId,
    engagement_id: input.engagementId,
    task_id: input.taskId,
    agent_did: input.agentDid,
    description: `Refund of ${line?.description ?? input.escrowId}`,
    net_fils: net,
    vat_fils: vat,
    gross_fils: gross,
    vat_rate_bps: VAT_RATE_BPS,
    vat_inclusive: true,
    transfer_id: input.transferId,
    issuer_details: JSON.stringify({ name: issuer.name, address: issuer.address, trn: issuer.trn }),
    client_details: JSON.stringify({ org_id: input.orgId, name: input.orgName }),
    reason: input.reason,
    issued_at: issuedAt,
  })
  await deps.events.record(trx, {
    orgId: input.orgId,
    type: 'credit_note.issued',
    subjects: {
      credit_note_id: id,
      refund_id: input.refundId,
      escrow_id: input.escrowId,
      ...(line ? { invoice_id: line.invoice_id } : {}),
    },
    actor: input.actor,
    data: {
      number,
      invoice_number: line?.number ?? null,
      net_fils: net,
      vat_fils: vat,
      gross_fils: gross,
      transfer_id: input.transferId,
    },
  })
  return { id, number, vatFils: vat }
}

/**
 * A credit note as the API shows it: a document of its own that takes amounts off, so its
 * amounts are negative (net, VAT and total), in the reader's locale.
 */
export function creditNoteView(row: CreditNoteRow, invoiceNumber: string | null, locale: MoneyLocale = 'en') {
  const m = (fils: number | string) => money(-Number(fils), row.currency, locale)
  return {
    id: row.id,
    number: row.number,
    kind: 'credit_note' as const,
    refund_id: row.refund_id,
    invoice: row.invoice_id ? { id: row.invoice_id, number: invoiceNumber ?? '' } : null,
    issuer: row.issuer_details as { name: string; address: string; trn: string },
    client: row.client_details as { org_id: string; name: string },
    issued_at: row.issued_at.toISOString(),
    currency: row.currency,
    vat_rate_percent: row.vat_rate_bps / 100,
    reason: row.reason,
    lines: [
      {
        position: 1,
        description: row.description,
        escrow_id: row.escrow_id,
        engagement_id: row.engagement_id,
        task_id: row.task_id,
        agent_did: row.agent_did,
        net: m(row.net_fils),
        vat: m(row.vat_fils),
        gross: m(row.gross_fils),
      },
    ],
    totals: { net: m(row.net_fils), vat: m(row.vat_fils), gross: m(row.gross_fils) },
  }
}
export type CreditNoteView = ReturnType<typeof creditNoteView>

/** The summary of a credit note an invoice lists. */
export const creditNoteSummary = (row: CreditNoteRow, locale: MoneyLocale) => {
  const m = (fils: number | string) => money(-Number(fils), row.currency, locale)
  return {
    id: row.id,
    number: row.number,
    refund_id: row.refund_id,
    escrow_id: row.escrow_id,
    issued_at: row.issued_at.toISOString(),
    net: m(row.net_fils),
    vat: m(row.vat_fils),
    gross: m(row.gross_fils),
  }
}

const invoiceNumberOf = async (deps: InvoiceDeps, row: CreditNoteRow) =>
  row.invoice_id ? ((await store.invoiceOf(deps.ctx.db, row.org_id, row.invoice_id))?.number ?? null) : null

export async function creditNoteOf(deps: InvoiceDeps, orgId: string, id: string, locale: MoneyLocale) {
  const row = await store.creditNoteOf(deps.ctx.db, orgId, id)
  if (!row) throw rentalError('credit_note_not_found', `no credit note ${id}`)
  return creditNoteView(row, await invoiceNumberOf(deps, row), locale)
}

export async function creditNoteList(deps: InvoiceDeps, orgId: string, page: Page, locale: MoneyLocale) {
  const { rows, total } = await store.creditNotesOf(deps.ctx.db, orgId, page.limit, page.offset)
  const notes = []
  for (const row of rows) notes.push(creditNoteView(row, await invoiceNumberOf(deps, row), locale))
  return { credit_notes: notes, total, limit: page.limit, offset: page.offset }
}
