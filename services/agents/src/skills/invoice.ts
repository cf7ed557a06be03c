/**
 * Invoice check: reads item lines (quantity × unit price), recomputes each line, the subtotal, the
 * VAT (the stated rate, else the UAE's 5%) and the total, in integer minor units, and reports every
 * stated figure that differs from the recomputed one.
 */
import { CURRENCIES, currencyOf, formatMinor, mulDivRound, toMinor } from './money.ts'

export const DEFAULT_VAT_BASIS_POINTS = 500

export interface InvoiceLine {
  line: number
  description: string
  quantity: string
  unit_price: string
  computed: string
  stated?: string
}
export interface Mismatch {
  field: string
  stated: string
  computed: string
  difference: string
}
export interface InvoiceCheck {
  currency: string
  lines: InvoiceLine[]
  subtotal: { computed: string; stated?: string }
  vat: { rate_percent: string; rate_source: 'stated' | 'default'; computed: string; stated?: string }
  total: { computed: string; stated?: string }
  mismatches: Mismatch[]
  ok: boolean
}

const NUMBER = /(?<![\p{L}\d.,])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?![\d\p{L}%]|[.,]\d)/gu
const CODE = new RegExp(`\\b(${Object.keys(CURRENCIES).join('|')}|Dhs?)\\b|[$€£]`, 'i')
const QUANTITY = /(?<![\p{L}\d.,])(\d+(?:\.\d{1,3})?)\s*(?:x|×|\*)(?=\s|\d)/iu
const PERCENT = /(\d{1,2}(?:\.\d{1,2})?)\s*%/

/** The numbers of a text that read as amounts, in order. */
const amountsIn = (text: string) => [...text.matchAll(NUMBER)].map((m) => m[1]!)

/** A percentage ("5", "7.5") in basis points. */
const basisPoints = (percent: string) => toMinor(percent, 2)!

export function checkInvoice(text: string): InvoiceCheck {
  const currency = currencyOf(CODE.exec(text)?.[0] ?? 'AED') ?? 'AED'
  const exponent = CURRENCIES[currency]!
  const money = (s: string) => toMinor(s, exponent)
  const show = (minor: number) => formatMinor(minor, exponent)
  const lines: InvoiceLine[] = []
  const computedLines: Array<{ computed: number; stated?: number }> = []
  let statedSubtotal: number | undefined
  let statedVat: number | undefined
  let statedTotal: number | undefined
  let rate: number | undefined

  text.split(/\r?\n/).forEach((raw, index) => {
    const lineText = raw.trim()
    if (!lineText) return
    const last = amountsIn(lineText).at(-1)
    if (/\bsub[\s-]?total\b/i.test(lineText)) {
      if (last !== undefined) statedSubtotal = money(last)
      return
    }
    if (/\b(?:vat|tax)\b/i.test(lineText)) {
      const percent = PERCENT.exec(lineText)?.[1]
      if (percent) rate = basisPoints(percent)
      const amounts = amountsIn(lineText.replace(PERCENT, ''))
      if (amounts.length) statedVat = money(amounts.at(-1)!)
      return
    }
    if (/\b(?:grand\s+)?total\b|\b(?:amount|balance)\s+due\b/i.test(lineText)) {
      if (last !== undefined) statedTotal = money(last)
      return
    }
    const quantity = QUANTITY.exec(lineText)
    if (!quantity) return
    const before = lineText.slice(0, quantity.index)
    const after = lineText.slice(quantity.index + quantity[0].length)
    const numbers = amountsIn(after)
    const unit = numbers[0] === undefined ? undefined : money(numbers[0])
    if (unit === undefined) return
    // "= 300.00" or a last figure after the unit price is the line total as stated
    const statedText =
      /=\s*\D{0,4}?([\d,]+(?:\.\d+)?)/.exec(after)?.[1] ?? (numbers.length > 1 ? numbers.at(-1) : undefined)
    const stated = statedText === undefined ? undefined : money(statedText)
    const qtyMilli = toMinor(quantity[1]!, 3)!
    const computed = mulDivRound(qtyMilli, unit, 1000)
    const description = `${before} ${after.split(/@|\bat\b|\d/)[0] ?? ''}`
      .replace(CODE, '')
      .replace(/[-:|,]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
    lines.push({
      line: index + 1,
      description,
      quantity: quantity[1]!,
      unit_price: show(unit),
      computed: show(computed),
      ...(stated !== undefined ? { stated: show(stated) } : {}),
    })
    computedLines.push({ computed, ...(stated !== undefined ? { stated } : {}) })
  })

  const subtotal = computedLines.reduce((sum, l) => sum + l.computed, 0)
  const rateBp = rate ?? DEFAULT_VAT_BASIS_POINTS
  const vat = mulDivRound(subtotal, rateBp, 10_000)
  const total = subtotal + vat
  const mismatches: Mismatch[] = []
  const compare = (field: string, stated: number | undefined, computed: number) => {
    if (stated !== undefined && stated !== computed)
      mismatches.push({
        field,
        stated: show(stated),
        computed: show(computed),
        difference: show(stated - computed),
      })
  }
  computedLines.forEach((l, i) => compare(`lines[${i}]`, l.stated, l.computed))
  compare('subtotal', statedSubtotal, subtotal)
  compare('vat', statedVat, vat)
  compare('total', statedTotal, total)
  const opt = (stated: number | undefined) => (stated === undefined ? {} : { stated: show(stated) })
  return {
    currency,
    lines,
    subtotal: { computed: show(subtotal), ...opt(statedSubtotal) },
    vat: {
      rate_percent: formatMinor(rateBp, 2),
      rate_source: rate === undefined ? 'default' : 'stated',
      computed: show(vat),
      ...opt(statedVat),
    },
    total: { computed: show(total), ...opt(statedTotal) },
    mismatches,
    ok: mismatches.length === 0 && lines.length > 0,
  }
}
