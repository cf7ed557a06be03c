import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { b64uDecode, b64uEncode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { type Ed25519KeyPair, signEd25519, verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { formatMoney, vatIncluded, vatShareOf } from '@svc/kit'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { embeddedFonts, pdfText, unicodePdfText } from './pdf-read.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface Refund {
  id: string
  state: string
  amount: Money
  transfer_id: string | null
  receipt_leaf_hash: string | null
  signed: { body: Record<string, unknown>; hash: string; signature: string; provider_did: string } | null
  credit_note: { id: string; number: string } | null
}
interface CreditNote {
  id: string
  number: string
  refund_id: string
  invoice: { id: string; number: string } | null
  totals: { net: Money; vat: Money; gross: Money }
  lines: Array<{ escrow_id: string; net: Money; vat: Money; gross: Money }>
}
interface Invoice {
  id: string
  number: string
  state: string
  totals: { net: Money; vat: Money; gross: Money }
  lines: Array<{ escrow_id: string; net: Money; vat: Money; gross: Money }>
  credit_notes: Array<{ id: string; number: string; gross: Money; vat: Money }>
  payments: Array<{ kind: string; amount: Money }>
  balance: Money
}

const PRICE = 2_500
/** The VAT inside the price (5 %, VAT-inclusive), posted to platform:vat by the release. */
const PRICE_VAT = vatIncluded(PRICE)
/** The VAT a credit of `amount` takes back from the price's after `before` was credited. */
const vatOf = (amount: number, before = 0) =>
  vatShareOf(before + amount, PRICE, PRICE_VAT) - vatShareOf(before, PRICE, PRICE_VAT)
const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code
const cnSerial = (number: string) => Number(number.slice(-6))

describe('rental money: signed refunds, credit notes, budgets released, idempotent writes, paid by operators', () => {
  let s: FullStack
  let operator: Client
  let stranger: Client
  let agentDid = ''
  const start = new Date(Date.now() - 1000)

  /** A hired engagement with one completed task: its escrow id and the engagement's signing key. */
  const taskWithEscrow = async () => {
    const key: Ed25519KeyPair = s.newClientKey()
    const engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const task = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    const taskId = (task.body.task as { id: string }).id
    const { id } = await s.db
      .selectFrom('escrows')
      .select('id')
      .where('task_id', '=', taskId)
      .executeTakeFirstOrThrow()
    return { engagementId, key, escrowId: id }
  }
  /** Releases the engagement's completed tasks' escrows without invoicing them. */
  const release = async (engagementId: string, key: Ed25519KeyPair) => {
    const pending = await s.call(s.alice, 'GET', `/api/engagements/${engagementId}/releases/pending`)
    for (const r of pending.body.releases as Array<{ escrow: { hash: string }; instruction: unknown }>) {
      const signature = b64uEncode(signEd25519(key.seed, canonicalBytes(r.instruction)))
      const res = await s.call(s.alice, 'POST', `/api/engagements/${engagementId}/releases`, {
        escrow_hash: r.escrow.hash,
        instruction: { body: r.instruction, signature },
      })
      assert.equal(res.status, 200, res.text)
    }
  }
  /** Asked for by alice, accepted and approved by the operator: the settled refund. */
  const settled = async (escrowId: string, amount: number) => {
    const asked = await s.call(s.alice, 'POST', '/api/refunds', {
      escrow_id: escrowId,
      amount_fils: amount,
      reason: 'Part of the summary was missing.',
    })
    assert.equal(asked.status, 201, asked.text)
    const id = (asked.body as unknown as Refund).id
    assert.equal((await s.call(operator, 'POST', `/api/refunds/${id}/accept`, {})).status, 200)
    const approved = await s.call(operator, 'POST', `/api/refunds/${id}/approve`, {})
    assert.equal(approved.status, 200, approved.text)
    return approved.body as unknown as Refund
  }
  const creditNote = async (id: string, who = s.alice) => {
    const res = await s.call(who, 'GET', `/api/credit-notes/${id}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as CreditNote
  }
  const invoice = async (id: string) => {
    const res = await s.call(s.alice, 'GET', `/api/invoices/${id}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Invoice
  }

  before(async () => {
    s = await startFullStack({ RENTAL_OPERATORS: 'another-client' })
    operator = s.bob
    stranger = await s.signInWith('stranger@money.example')
    agentDid = await s.agentOf('job_summary')
  })
  after(async () => s?.close())

  it('an approval signs the refund with the provider key, credits the invoice, lowers the budget and shows in the statement', async () => {
    const budget = await s.call(s.alice, 'POST', '/api/budgets', { limit_fils: 1_000_000 })
    assert.equal(budget.status, 200, budget.text)
    const budgetId = budget.body.id as string
    const { engagementId, key, escrowId } = await taskWithEscrow()
    const invoiceId = await releaseAndInvoice(s, engagementId, key)
    assert.ok(invoiceId)
    const spent = async () =>
      ((await s.call(s.alice, 'GET', `/api/budgets/${budgetId}`)).body.spent as Money).amount_fils
    assert.equal(await spent(), PRICE)

    const amount = 1_234
    const refund = await settled(escrowId, amount)
    // the signed body: JCS + Ed25519 by the provider's did:key, checked offline
    const signed = refund.signed!
    const { did } = await s.db.selectFrom('provider_identity').select('did').executeTakeFirstOrThrow()
    assert.equal(signed.provider_did, did)
    assert.deepEqual(
      [signed.body.type, signed.body.refund_id, signed.body.escrow_id, signed.body.amount_fils],
      ['svc.refund', refund.id, escrowId, amount],
    )
    const bytes = canonicalBytes(signed.body)
    assert.ok(verifyEd25519(ed25519FromDidKey(did), bytes, b64uDecode(signed.signature)))
    assert.equal(signed.hash, `sha256:${createHash('sha256').update(bytes).digest('hex')}`)
    const forged = canonicalBytes({ ...signed.body, amount_fils: amount + 1 })
    assert.ok(!verifyEd25519(ed25519FromDidKey(did), forged, b64uDecode(signed.signature)))

    // the credit note: its own sequence, against the invoice, VAT reversed half-up, amounts negative
    const number = refund.credit_note!.number
    assert.match(number, /^CN-\d{4}-\d{6}$/)
    const note = await creditNote(refund.credit_note!.id)
    const issued = await invoice(invoiceId)
    assert.deepEqual(note.invoice, { id: invoiceId, number: issued.number })
    assert.equal(note.refund_id, refund.id)
    // the refund is the gross taken off (prices are VAT-inclusive), its VAT share inside it
    assert.deepEqual(
      [note.totals.net.amount_fils, note.totals.vat.amount_fils, note.totals.gross.amount_fils],
      [-(amount - vatOf(amount)), -vatOf(amount), -amount],
    )
    // the refund's transfer takes that VAT back from platform:vat
    const { rows: postings } = await sql<{ account_id: string; amount: string }>`
      select account_id, amount from rail_postings where transfer_id = ${refund.transfer_id}`.execute(s.db)
    assert.equal(Number(postings.find((p) => p.account_id === 'platform:vat')?.amount), -vatOf(amount))
    assert.equal(
      postings.reduce((sum, p) => sum + Number(p.amount), 0),
      0,
    )
    assert.equal(note.lines[0]!.escrow_id, escrowId)
    assert.deepEqual(
      issued.credit_notes.map((c) => c.number),
      [number],
    )
    // paid by the release, the refund paid back: nothing owed either way
    assert.deepEqual(
      issued.payments.map((p) => [p.kind, p.amount.amount_fils]),
      [
        ['escrow_release', PRICE],
        ['refund', -amount],
      ],
    )
    assert.equal(issued.balance.amount_fils, 0)
    // the budget's spend of the period goes down by the refund
    assert.equal(await spent(), PRICE - amount)

    // readable: HTML in English and Arabic, a PDF read back
    const en = await s.call(s.alice, 'GET', `/api/credit-notes/${note.id}?format=html`)
    assert.equal(en.status, 200)
    assert.match(en.headers.get('content-type') ?? '', /text\/html/)
    assert.ok(
      en.text.includes('Tax credit note') && en.text.includes(number) && en.text.includes(issued.number),
    )
    const ar = await s.call(s.alice, 'GET', `/api/credit-notes/${note.id}?format=html&lang=ar`)
    assert.ok(
      ar.text.includes('dir="rtl"') && ar.text.includes('إشعار دائن ضريبي') && ar.text.includes('د.إ'),
    )
    const pdf = await s.alice.jar.fetch(`${s.rental.url}/api/credit-notes/${note.id}`, {
      headers: { accept: 'application/pdf' },
    })
    assert.equal(pdf.headers.get('content-type'), 'application/pdf')
    const text = pdfText(Buffer.from(await pdf.arrayBuffer()))
    for (const part of ['Tax credit note', number, issued.number, note.totals.gross.display])
      assert.ok(text.includes(part), `${part} in ${text}`)
    // in Arabic: right to left in the embedded Arabic font, the amounts negative in Arabic digits
    const arPdf = await s.alice.jar.fetch(`${s.rental.url}/api/credit-notes/${note.id}?format=pdf&lang=ar`)
    const arBytes = Buffer.from(await arPdf.arrayBuffer())
    assert.ok(embeddedFonts(arBytes).includes('IBMPlexSansArabic-Regular'))
    const arText = unicodePdfText(arBytes).split('\n')
    const arabicGross = formatMoney(note.totals.gross.amount_fils, 'AED', 'ar')
    for (const part of [
      'إشعار دائن ضريبي',
      'مقابل الفاتورة: ',
      number,
      issued.number,
      /[٠-٩٫٬]+/.exec(arabicGross)![0],
    ])
      assert.ok(arText.includes(part), `${part} in ${arText.join(' | ')}`)

    // the statement traces the reversal to its transfer, its receipt's leaf hash and the credit note
    const to = encodeURIComponent(new Date(Date.now() + 1000).toISOString())
    const st = await s.call(
      s.alice,
      'GET',
      `/api/statements?from=${encodeURIComponent(start.toISOString())}&to=${to}`,
    )
    assert.equal(st.status, 200, st.text)
    assert.equal(st.body.reconciles, true)
    const lines = (
      st.body.movements as Array<{
        kind: string
        transfer_id: string
        escrow_id: string | null
        receipts: Array<{ type: string; leaf_hash: string }>
        refund: { id: string; hash: string; credit_note: { number: string } } | null
      }>
    ).filter((m) => m.transfer_id === refund.transfer_id)
    assert.ok(lines.length > 0)
    for (const line of lines) {
      assert.equal(line.kind, 'refund')
      assert.equal(line.escrow_id, escrowId)
      assert.deepEqual(line.receipts, [{ type: 'refund.settled', leaf_hash: refund.receipt_leaf_hash }])
      assert.deepEqual(
        [line.refund?.id, line.refund?.hash, line.refund?.credit_note?.number],
        [refund.id, signed.hash, number],
      )
    }
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select('id')
      .where('receipt_type', '=', 'refund.settled')
      .where('subject', '=', refund.id)
      .execute()
    assert.equal(receipts.length, 1)
    // other organizations: 404
    const theirs = await s.call(stranger, 'GET', `/api/credit-notes/${note.id}`)
    assert.deepEqual([theirs.status, codeOf(theirs)], [404, 'credit_note_not_found'])
    assert.equal(
      ((await s.call(stranger, 'GET', '/api/credit-notes')).body.credit_notes as unknown[]).length,
      0,
    )
    const mine = await s.call(s.alice, 'GET', '/api/credit-notes')
    assert.ok((mine.body.credit_notes as CreditNote[]).some((c) => c.id === note.id))
  })

  it('partial credits of one line take back exactly its VAT, numbered without gaps', async () => {
    const { engagementId, key, escrowId } = await taskWithEscrow()
    const invoiceId = await releaseAndInvoice(s, engagementId, key)
    // 1250 + 1250: each alone would round 59.5 up to 60; together they take back the line's 119
    const first = await settled(escrowId, 1_250)
    const second = await settled(escrowId, 1_250)
    assert.equal(cnSerial(second.credit_note!.number), cnSerial(first.credit_note!.number) + 1)
    const issued = await invoice(invoiceId)
    const vats = issued.credit_notes.map((c) => -c.vat.amount_fils)
    assert.deepEqual(vats, [60, 59])
    assert.equal(vats[0]! + vats[1]!, issued.lines[0]!.vat.amount_fils)
    assert.equal(issued.balance.amount_fils, 0)
  })

  it('an escrow refunded before it is invoiced: the credit note stands alone, the later invoice lists it; Idempotency-Key on refunds and invoices', async () => {
    const { engagementId, key, escrowId } = await taskWithEscrow()
    await release(engagementId, key)
    // a refund asked for twice with one key: one refund, the first answer again
    const body = { escrow_id: escrowId, amount_fils: 500, reason: 'Late.' }
    const headers = { 'idempotency-key': `refund-${escrowId}` }
    const one = await s.call(s.alice, 'POST', '/api/refunds', body, { headers })
    const two = await s.call(s.alice, 'POST', '/api/refunds', body, { headers })
    assert.deepEqual([one.status, two.status], [201, 201], two.text)
    assert.deepEqual(two.body, one.body)
    const other = await s.call(s.alice, 'POST', '/api/refunds', { ...body, amount_fils: 400 }, { headers })
    assert.deepEqual([other.status, codeOf(other)], [422, 'idempotency_key_reused'])
    const { n } = await s.db
      .selectFrom('refunds')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('escrow_id', '=', escrowId)
      .executeTakeFirstOrThrow()
    assert.equal(Number(n), 1)
    const id = one.body.id as string
    assert.equal((await s.call(operator, 'POST', `/api/refunds/${id}/accept`, {})).status, 200)
    const approved = (await s.call(operator, 'POST', `/api/refunds/${id}/approve`, {}))
      .body as unknown as Refund
    const note = await creditNote(approved.credit_note!.id)
    assert.equal(note.invoice, null)

    const invoiceHeaders = { 'idempotency-key': `invoice-${engagementId}` }
    const made = await s.call(
      s.alice,
      'POST',
      '/api/invoices',
      { engagement_id: engagementId },
      { headers: invoiceHeaders },
    )
    assert.equal(made.status, 201, made.text)
    const again = await s.call(
      s.alice,
      'POST',
      '/api/invoices',
      { engagement_id: engagementId },
      { headers: invoiceHeaders },
    )
    assert.equal(again.status, 201, again.text)
    assert.deepEqual(again.body, made.body)
    const reused = await s.call(
      s.alice,
      'POST',
      '/api/invoices',
      { from: start.toISOString(), to: new Date().toISOString() },
      { headers: invoiceHeaders },
    )
    assert.deepEqual([reused.status, codeOf(reused)], [422, 'idempotency_key_reused'])
    const issued = made.body as unknown as Invoice
    // the invoice shows what was paid and lists the earlier credit note against its escrow
    assert.equal(issued.lines[0]!.gross.amount_fils, PRICE)
    assert.equal(issued.state, 'paid')
    assert.deepEqual(
      issued.credit_notes.map((c) => c.id),
      [note.id],
    )
    assert.equal(issued.balance.amount_fils, 0)
  })

  it('an operator marks another organization’s invoice paid (one of VAT on top, before 0051), once, with an event and a receipt', async () => {
    const { engagementId, key } = await taskWithEscrow()
    const invoiceId = await releaseAndInvoice(s, engagementId, key)
    // an invoice as issued before prices were VAT-inclusive: due until a payment is marked
    await s.db
      .updateTable('invoices')
      .set({ state: 'issued', vat_inclusive: false, paid_reference: null, paid_at: null, paid_by: null })
      .where('id', '=', invoiceId)
      .execute()
    const pay = (who: Client, reference: string) =>
      s.call(who, 'POST', `/api/invoices/${invoiceId}/paid`, { reference })
    const byStranger = await pay(stranger, 'WIRE-1')
    assert.deepEqual([byStranger.status, codeOf(byStranger)], [404, 'invoice_not_found'])
    const paid = await pay(operator, 'WIRE-1')
    assert.equal(paid.status, 200, paid.text)
    assert.equal((paid.body as unknown as Invoice).state, 'paid')
    assert.equal((await pay(operator, 'WIRE-1')).status, 200)
    const otherRef = await pay(s.alice, 'WIRE-2')
    assert.deepEqual([otherRef.status, codeOf(otherRef)], [409, 'invoice_paid'])
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select('id')
      .where('receipt_type', '=', 'invoice.paid')
      .where('subject', '=', invoiceId)
      .execute()
    assert.equal(receipts.length, 1)
    const { rows } = await sql<{ org_id: string; actor_type: string }>`
      select org_id, actor_type from rental_events where type = 'invoice.paid' and subjects->>'invoice_id' = ${invoiceId}`.execute(
      s.db,
    )
    assert.deepEqual(rows, [{ org_id: s.alice.me.organization.id, actor_type: 'operator' }])
  })
})
