import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { formatMoney, vatIncluded } from '@svc/kit'
import { sql } from 'kysely'
import type { Ed25519KeyPair } from '@svc/trust/ed25519'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { embeddedFonts, pdfText, unicodePdfText } from './pdf-read.ts'
import { eventually } from '../support/stack.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface Invoice {
  id: string
  number: string
  state: string
  issuer: { name: string; trn: string }
  client: { name: string }
  lines: Array<{ escrow_id: string; net: Money; vat: Money; gross: Money }>
  totals: { net: Money; vat: Money; gross: Money }
  paid: { reference: string; paid_at: string } | null
  payments: Array<{ kind: string; amount: Money; transfer_id: string | null; escrow_id: string | null }>
  balance: Money
}

const codeOf = (a: { body: Record<string, unknown> }) => (a.body.error as { code?: string } | undefined)?.code

describe('rental invoices: numbering, VAT per line, HTML and PDF, paid once', () => {
  let s: FullStack
  let engagementId = ''
  let key: Ed25519KeyPair
  let first: Invoice

  /**
   * Released escrows of the engagement with amounts no catalogue agent charges (the rounding
   * cases), released at `releasedAt`: rows as a release leaves them.
   */
  const seedReleased = async (amounts: number[], releasedAt: Date) => {
    const org = s.alice.me.organization.id
    for (const amount of amounts)
      await s.db
        .insertInto('escrows')
        .values({
          id: `esc_${randomUUID()}`,
          engagement_id: engagementId,
          org_id: org,
          task_id: null,
          amount_fils: amount,
          body: '{}',
          hash: `sha256:${randomUUID().replaceAll('-', '').padEnd(64, '0')}`,
          state: 'released',
          signature: null,
          open_transfer_id: null,
          opened_at: releasedAt,
          fee_fils: Math.floor(amount / 10),
          vat_fils: vatIncluded(amount),
          release_instruction: null,
          release_signature: null,
          release_transfer_id: null,
          release_receipt_id: null,
          release_answer: null,
          released_at: releasedAt,
        })
        .execute()
  }

  before(async () => {
    // bob (the demo user as another client) would be an operator in development, and operators may
    // mark any organization's invoice paid (credit-notes.test.ts): here he is a plain other client
    s = await startFullStack({ RENTAL_OPERATORS: 'ops@invoices.example' })
    const agentDid = await s.agentOf('job_summary')
    key = s.newClientKey()
    engagementId = await s.hireAndSign(s.alice, 'job_summary', agentDid, key)
    const task = await s.call(s.alice, 'POST', '/api/tasks', {
      engagement_id: engagementId,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    assert.equal((task.body.task as { state: string }).state, 'completed', task.text)
  })
  after(async () => s?.close())

  it('invoices a real release as paid: the price signed is the gross, its VAT on the rail, balance 0', async () => {
    const start = new Date(Date.now() - 1000)
    const id = await releaseAndInvoice(s, engagementId, key)
    assert.ok(id)
    const got = await s.call(s.alice, 'GET', `/api/invoices/${id}`)
    assert.equal(got.status, 200, got.text)
    first = got.body as unknown as Invoice
    assert.match(first.number, /^INV-\d{4}-000001$/)
    assert.equal(first.lines.length, 1)
    const escrow = await s.db
      .selectFrom('escrows')
      .select(['id', 'amount_fils', 'fee_fils', 'vat_fils', 'release_transfer_id'])
      .where('engagement_id', '=', engagementId)
      .executeTakeFirstOrThrow()
    const price = Number(escrow.amount_fils)
    const vat = vatIncluded(price)
    // the client signed the price and is billed the price: the VAT is inside it, not on top
    const [line] = first.lines
    assert.deepEqual(
      [line!.gross.amount_fils, line!.vat.amount_fils, line!.net.amount_fils],
      [price, vat, price - vat],
    )
    assert.equal(first.totals.gross.display, formatMoney(price))
    assert.equal(first.issuer.trn, '100000000000003')
    // paid by the release it lists, nothing left to pay
    assert.equal(first.state, 'paid')
    assert.equal(first.paid!.reference, 'escrow')
    assert.equal(first.balance.amount_fils, 0)
    assert.deepEqual(
      first.payments.map((p) => [p.kind, p.amount.amount_fils, p.transfer_id, p.escrow_id]),
      [['escrow_release', price, escrow.release_transfer_id, escrow.id]],
    )
    // the release posted the VAT to platform:vat, and the statement shows where it went
    const { rows } = await sql<{ account_id: string; amount: string }>`
      select account_id, amount from rail_postings where transfer_id = ${escrow.release_transfer_id}`.execute(
      s.db,
    )
    const postings = Object.fromEntries(
      rows.map((r) => [r.account_id.split(':')[0] === 'payout' ? 'payout' : r.account_id, Number(r.amount)]),
    )
    const fee = Number(escrow.fee_fils)
    assert.deepEqual(postings, {
      [`escrow:${escrow.id}`]: -price,
      payout: price - fee - vat,
      'platform:fees': fee,
      'platform:vat': vat,
    })
    assert.equal(Number(escrow.vat_fils), vat)
    const to = encodeURIComponent(new Date(Date.now() + 1000).toISOString())
    const st = await s.call(
      s.alice,
      'GET',
      `/api/statements?from=${encodeURIComponent(start.toISOString())}&to=${to}`,
    )
    assert.equal(st.status, 200, st.text)
    const movements = (
      st.body.movements as Array<{ kind: string; transfer_id: string; held: { amount_fils: number } }>
    ).filter((m) => m.transfer_id === escrow.release_transfer_id)
    assert.deepEqual(movements.map((m) => [m.kind, m.held.amount_fils]).sort(), [
      ['fee', -fee],
      ['release', -(price - fee - vat)],
      ['vat', -vat],
    ])
    assert.equal(st.body.reconciles, true)
    // nothing is due: it cannot be marked paid again
    const mark = await s.call(s.alice, 'POST', `/api/invoices/${id}/paid`, { reference: 'BANK-1' })
    assert.deepEqual([mark.status, codeOf(mark)], [409, 'invoice_paid'])
    assert.match((mark.body.error as { message: string }).message, /paid by its escrows’ releases/)
    // the release's escrow is taken: the engagement has nothing more to invoice
    const again = await s.call(s.alice, 'POST', '/api/invoices', { engagement_id: engagementId })
    assert.deepEqual([again.status, codeOf(again)], [409, 'nothing_to_invoice'])
  })

  it('rounds the VAT inside each line half-up to the fil; the totals are the sums of the lines', async () => {
    const amounts = [10, 11, 21, 32, 1, 12_345, 12_352, 2 ** 40]
    await seedReleased(amounts, new Date('2020-01-01T10:00:00Z'))
    const made = await s.call(s.alice, 'POST', '/api/invoices', {
      from: '2020-01-01T00:00:00Z',
      to: '2020-01-02T00:00:00Z',
    })
    assert.equal(made.status, 201, made.text)
    const invoice = made.body as unknown as Invoice
    assert.match(invoice.number, /^INV-\d{4}-000002$/)
    const byGross = new Map(invoice.lines.map((l) => [l.gross.amount_fils, l]))
    // gross × 5 / 105: 10 → 0.476 → 0; 11 → 0.524 → 1; 21 → 1; 32 → 1.524 → 2; 1 → 0; 12345 → 587.86 → 588
    const expected: Array<[number, number]> = [
      [10, 0],
      [11, 1],
      [21, 1],
      [32, 2],
      [1, 0],
      [12_345, 588],
      [12_352, 588],
      [2 ** 40, 52_357_696_561],
    ]
    for (const [gross, vat] of expected) {
      const line = byGross.get(gross)!
      assert.equal(line.vat.amount_fils, vat, `VAT of ${gross}`)
      assert.equal(line.net.amount_fils, gross - vat)
      assert.equal(line.gross.display, formatMoney(gross))
    }
    assert.equal(invoice.state, 'paid')
    assert.equal(invoice.balance.amount_fils, 0)
    const sum = (k: 'net' | 'vat' | 'gross') => invoice.lines.reduce((t, l) => t + l[k].amount_fils, 0)
    assert.equal(invoice.totals.net.amount_fils, sum('net'))
    assert.equal(invoice.totals.vat.amount_fils, sum('vat'))
    assert.equal(invoice.totals.gross.amount_fils, sum('gross'))
    assert.equal(
      invoice.totals.gross.amount_fils,
      invoice.totals.net.amount_fils + invoice.totals.vat.amount_fils,
    )
    assert.match(byGross.get(11)!.gross.display, /^AED\s0\.11$/)
    assert.match(byGross.get(11)!.vat.display, /^AED\s0\.01$/)
  })

  it('invoices an escrow once: the same period again is 409, and the database refuses a second line', async () => {
    const again = await s.call(s.alice, 'POST', '/api/invoices', {
      from: '2019-12-01T00:00:00Z',
      to: '2020-01-31T00:00:00Z',
    })
    assert.deepEqual([again.status, codeOf(again)], [409, 'nothing_to_invoice'])
    const line = await s.db
      .selectFrom('invoice_lines')
      .selectAll()
      .where('position', '=', 1)
      .executeTakeFirstOrThrow()
    await assert.rejects(
      s.db
        .insertInto('invoice_lines')
        .values({ ...line, invoice_id: first.id, position: 99 })
        .execute(),
    )
  })

  it('numbers concurrent creations 1..n with no gap and no duplicate, refused ones included', async () => {
    const days = [1, 2, 3, 4, 5, 6]
    for (const d of days) await seedReleased([100 + d], new Date(`2020-02-0${d}T12:00:00Z`))
    const period = (month: string, d: number) => ({
      from: `2020-${month}-0${d}T00:00:00Z`,
      to: `2020-${month}-0${d + 1}T00:00:00Z`,
    })
    const answers = await Promise.all([
      ...days.map((d) => s.call(s.alice, 'POST', '/api/invoices', period('02', d))),
      // empty periods: each takes a number, then rolls back with it
      ...[1, 2, 3, 4].map((d) => s.call(s.alice, 'POST', '/api/invoices', period('03', d))),
    ])
    assert.deepEqual(
      answers.map((a) => a.status),
      [201, 201, 201, 201, 201, 201, 409, 409, 409, 409],
    )
    const list = await s.call(s.alice, 'GET', '/api/invoices?limit=100')
    const numbers = (list.body.invoices as Invoice[])
      .map((i) => Number(i.number.slice(-6)))
      .sort((a, b) => a - b)
    assert.deepEqual(numbers, [1, 2, 3, 4, 5, 6, 7, 8])
    assert.equal(list.body.total, 8)
  })

  it('the PDF (Accept or format) reads back with the number, the parties and the totals', async () => {
    for (const options of [
      { query: '?format=pdf', accept: '*/*' },
      { query: '', accept: 'application/pdf' },
    ]) {
      const res = await s.alice.jar.fetch(`${s.rental.url}/api/invoices/${first.id}${options.query}`, {
        headers: { accept: options.accept },
      })
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      const pdf = Buffer.from(await res.arrayBuffer())
      assert.equal(pdf.subarray(0, 5).toString(), '%PDF-')
      const text = pdfText(pdf)
      assert.match(text, /Tax invoice/)
      assert.ok(text.includes(first.number), text)
      assert.ok(text.includes(first.issuer.name), text)
      assert.ok(text.includes(first.client.name), text)
      assert.ok(text.includes(first.totals.gross.display), text)
      assert.ok(text.includes(first.lines[0]!.vat.display), text)
      // paid from escrow, not "Issued, due"
      assert.ok(text.includes('State: Paid from escrow'), text)
      assert.ok(text.includes(`Paid from escrow: ${first.totals.gross.display}`), text)
      assert.ok(text.includes(`Balance due: ${formatMoney(0)}`), text)
      assert.ok(!/Due date|Issued\b/.test(text), text)
      // English: pdfkit's own Helvetica, nothing embedded
      assert.deepEqual(embeddedFonts(pdf), [])
    }
  })

  it('the PDF in Arabic (lang or Accept-Language): an embedded Arabic font, its words, dates and amounts read back', async () => {
    const view = (await s.call(s.alice, 'GET', `/api/invoices/${first.id}?lang=ar`))
      .body as unknown as Invoice
    const month = new Intl.DateTimeFormat('ar-AE-u-nu-arab', { dateStyle: 'long', timeZone: 'UTC' })
      .formatToParts(new Date((view as unknown as { issued_at: string }).issued_at))
      .find((p) => p.type === 'month')!.value
    const digits = (display: string) => /[٠-٩٫٬]+/.exec(display)![0]
    for (const options of [
      { query: '?format=pdf&lang=ar', headers: { accept: '*/*' } as Record<string, string> },
      { query: '', headers: { accept: 'application/pdf', 'accept-language': 'ar, en;q=0.5' } },
    ]) {
      const res = await s.alice.jar.fetch(`${s.rental.url}/api/invoices/${first.id}${options.query}`, {
        headers: options.headers,
      })
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('content-type'), 'application/pdf')
      const pdf = Buffer.from(await res.arrayBuffer())
      assert.equal(pdf.subarray(0, 5).toString(), '%PDF-')
      assert.match(pdf.subarray(-6).toString(), /%%EOF/)
      assert.deepEqual(embeddedFonts(pdf).sort(), ['IBMPlexSansArabic-Bold', 'IBMPlexSansArabic-Regular'])
      const text = unicodePdfText(pdf)
      // each label is a run of its own, its glyphs read back through the font's ToUnicode map
      for (const words of [
        'فاتورة ضريبية',
        'رقم الفاتورة: ',
        'تاريخ الإصدار: ',
        'المُصدِر: ',
        'العميل: ',
        'الإجمالي',
        'المجاميع',
        'الحالة: ',
        'الرصيد المستحق: ',
      ])
        assert.ok(text.split('\n').includes(words), `${words} in ${text}`)
      for (const part of [first.number, first.issuer.name, first.client.name, month])
        assert.ok(text.includes(part), `${part} in ${text}`)
      // amounts as money in Arabic: Arabic-Indic digits and the dirham's sign, as the JSON in Arabic shows them
      assert.notEqual(view.totals.gross.display, first.totals.gross.display)
      assert.ok(text.split('\n').includes(digits(view.totals.gross.display)), text)
      assert.match(text, /[\s\u00a0]د\.إ\./)
      assert.ok(!text.includes('Tax invoice'), text)
      // paid from escrow (not issued and due)
      assert.ok(text.includes('مدفوعة من الضمان'), text)
      assert.ok(!text.includes('تاريخ الاستحقاق'), text)
    }
  })

  it('the HTML page in English and Arabic, amounts as money, everything escaped', async () => {
    const en = await s.call(s.alice, 'GET', `/api/invoices/${first.id}`, undefined, {
      headers: { accept: 'text/html' },
    })
    assert.equal(en.status, 200)
    assert.match(en.headers.get('content-type')!, /^text\/html/)
    assert.match(en.text, /<html lang="en" dir="ltr">/)
    assert.ok(en.text.includes(first.number))
    assert.ok(en.text.includes(first.totals.gross.display))
    const ar = await s.call(s.alice, 'GET', `/api/invoices/${first.id}?format=html&lang=ar`)
    assert.match(ar.text, /<html lang="ar" dir="rtl">/)
    assert.ok(ar.text.includes('فاتورة ضريبية'))
    assert.ok(ar.text.includes(formatMoney(first.totals.gross.amount_fils, 'AED', 'ar')))
    assert.ok(!ar.text.includes(first.totals.gross.display))
    // JSON in Arabic: the same fils, displayed in Arabic
    const json = await s.call(s.alice, 'GET', `/api/invoices/${first.id}?lang=ar`)
    assert.equal((json.body as unknown as Invoice).totals.gross.amount_fils, first.totals.gross.amount_fils)
    // a hostile organization name stays text
    const org = s.alice.me.organization.id
    const before = await s.db
      .selectFrom('orgs')
      .select('name')
      .where('id', '=', org)
      .executeTakeFirstOrThrow()
    await s.db.updateTable('orgs').set({ name: '<script>alert(1)</script>' }).where('id', '=', org).execute()
    try {
      await seedReleased([500], new Date('2020-04-01T12:00:00Z'))
      const made = await s.call(s.alice, 'POST', '/api/invoices', {
        from: '2020-04-01T00:00:00Z',
        to: '2020-04-02T00:00:00Z',
      })
      const page = await s.call(s.alice, 'GET', `/api/invoices/${made.body.id as string}?format=html`)
      assert.ok(!page.text.includes('<script>'))
      assert.ok(page.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'))
    } finally {
      await s.db.updateTable('orgs').set({ name: before.name }).where('id', '=', org).execute()
    }
  })

  it('an invoice of VAT on top (before 0051) is marked paid once: the same reference again answers the same, another is 409; an event and a receipt', async () => {
    // an invoice as issued before prices were VAT-inclusive: its VAT was never collected, so it is due
    await s.db
      .updateTable('invoices')
      .set({ state: 'issued', vat_inclusive: false, paid_reference: null, paid_at: null, paid_by: null })
      .where('id', '=', first.id)
      .execute()
    const due = await s.call(s.alice, 'GET', `/api/invoices/${first.id}`)
    const owed = due.body as unknown as Invoice
    assert.equal(owed.balance.amount_fils, owed.totals.vat.amount_fils)
    const path = `/api/invoices/${first.id}/paid`
    const paid = await s.call(s.alice, 'POST', path, { reference: 'BANK-2026-0001' })
    assert.equal(paid.status, 200, paid.text)
    const invoice = paid.body as unknown as Invoice
    assert.equal(invoice.state, 'paid')
    assert.equal(invoice.paid!.reference, 'BANK-2026-0001')
    assert.equal(invoice.balance.amount_fils, 0)
    assert.deepEqual(
      invoice.payments.map((p) => [p.kind, p.amount.amount_fils]),
      [
        ['escrow_release', owed.totals.net.amount_fils],
        ['marked', owed.totals.vat.amount_fils],
      ],
    )
    const again = await s.call(s.alice, 'POST', path, { reference: 'BANK-2026-0001' })
    assert.equal(again.status, 200)
    assert.deepEqual(again.body, paid.body)
    const other = await s.call(s.alice, 'POST', path, { reference: 'BANK-2026-0002' })
    assert.deepEqual([other.status, codeOf(other)], [409, 'invoice_paid'])
    assert.match((other.body.error as { message: string }).message, /paid/)
    const events = await s.db
      .selectFrom('rental_events')
      .select('type')
      .where('type', 'in', ['invoice.paid', 'invoice.issued'])
      .execute()
    assert.equal(events.filter((e) => e.type === 'invoice.paid').length, 1)
    assert.ok(events.filter((e) => e.type === 'invoice.issued').length >= 8)
    const receipts = await s.db
      .selectFrom('invoices')
      .select('paid_receipt_id')
      .where('id', '=', first.id)
      .execute()
    const receiptId = receipts[0]!.paid_receipt_id!
    assert.ok(receiptId)
    // the invoice.paid receipt reaches the ledger
    await eventually('the invoice.paid receipt is on the ledger', async () => {
      const row = await s.db
        .selectFrom('receipt_outbox')
        .select('ledger_index')
        .where('id', '=', receiptId)
        .executeTakeFirst()
      return row?.ledger_index !== null && row?.ledger_index !== undefined
    })
  })

  it('another organization’s invoice is 404; its list is empty', async () => {
    const got = await s.call(s.bob, 'GET', `/api/invoices/${first.id}`)
    assert.deepEqual([got.status, codeOf(got)], [404, 'invoice_not_found'])
    const paid = await s.call(s.bob, 'POST', `/api/invoices/${first.id}/paid`, { reference: 'X-1' })
    assert.deepEqual([paid.status, codeOf(paid)], [404, 'invoice_not_found'])
    const list = await s.call(s.bob, 'GET', '/api/invoices')
    assert.deepEqual(list.body.invoices, [])
    const theirs = await s.call(s.bob, 'POST', '/api/invoices', { engagement_id: engagementId })
    assert.deepEqual([theirs.status, codeOf(theirs)], [404, 'engagement_not_found'])
  })

  it('bad input is 400 naming the field; unknown ids 404', async () => {
    const bad = async (body: unknown, field: RegExp, path = '/api/invoices') => {
      const res = await s.call(s.alice, 'POST', path, body)
      assert.deepEqual([res.status, codeOf(res)], [400, 'invalid_request'], JSON.stringify(body))
      assert.match((res.body.error as { message: string }).message, field)
    }
    await bad({}, /from/)
    await bad({ from: '2020-01-01T00:00:00Z' }, /to/)
    await bad({ from: 'yesterday', to: '2020-01-01T00:00:00Z' }, /from/)
    await bad({ from: '2020-01-02T00:00:00Z', to: '2020-01-01T00:00:00Z' }, /to/)
    await bad(
      { engagement_id: engagementId, from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' },
      /engagement_id/,
    )
    await bad({ engagement_id: engagementId, total: 5 }, /total|additional/)
    await bad({}, /reference/, `/api/invoices/${first.id}/paid`)
    await bad({ reference: '' }, /reference/, `/api/invoices/${first.id}/paid`)
    await bad({ reference: 'R', paid_at: 'soon' }, /paid_at/, `/api/invoices/${first.id}/paid`)
    const format = await s.call(s.alice, 'GET', `/api/invoices/${first.id}?format=xml`)
    assert.equal(format.status, 400)
    const unknown = await s.call(s.alice, 'GET', '/api/invoices/inv_nope')
    assert.deepEqual([unknown.status, codeOf(unknown)], [404, 'invoice_not_found'])
  })
})
