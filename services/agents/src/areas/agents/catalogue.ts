/** The built-in agents: what each one is called, what its card says, and the skill it runs. */
import { extract } from '../../skills/extract.ts'
import { checkInvoice } from '../../skills/invoice.ts'
import { summarise } from '../../skills/summarise.ts'

export interface SkillOutput {
  /** human-readable, the artifact's text part */
  text: string
  /** structured, the artifact's data part (its JCS form is what output_sha256 hashes) */
  data: Record<string, unknown>
}

export interface AgentDefinition {
  id: string
  name: string
  description: string
  skill: { id: string; name: string; description: string; tags: string[]; examples: string[] }
  /** `options` is the message's metadata (e.g. `max_sentences` for the summariser). */
  run(text: string, options: Record<string, unknown>): SkillOutput
}

const maxSentences = (options: Record<string, unknown>) => {
  const n = options.max_sentences
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 50 ? n : 3
}

export const AGENTS: AgentDefinition[] = [
  {
    id: 'summariser',
    name: 'Summariser',
    description:
      'Extractive summary: scores sentences by the frequency of their content words and keeps the best ones in their original order.',
    skill: {
      id: 'summarise',
      name: 'Extractive summary',
      description:
        'Returns the top sentences (3 by default; message metadata max_sentences, 1-50) in their original order.',
      tags: ['summary', 'text', 'extractive'],
      examples: ['A paragraph or a document to summarise.'],
    },
    run(text, options) {
      const result = summarise(text, maxSentences(options))
      return { text: result.summary, data: { ...result } }
    },
  },
  {
    id: 'extractor',
    name: 'Entity extractor',
    description:
      'Reads the text of emails and returns the addresses, dates, amounts with their currency and IBANs (checked with mod-97) it finds.',
    skill: {
      id: 'extract-entities',
      name: 'Email entity extraction',
      description:
        'Emails, dates (ISO 8601 and common day-first or written forms, as YYYY-MM-DD), amounts with currency (AED, USD, …; in minor units) and valid IBANs.',
      tags: ['extraction', 'email', 'iban', 'dates', 'amounts'],
      examples: ['Please pay AED 12,500.00 by 31/03/2025 to GB82 WEST 1234 5698 7654 32.'],
    },
    run(text) {
      const found = extract(text)
      const lines = [
        ...(found.subject ? [`Subject: ${found.subject}`] : []),
        `Emails: ${found.emails.join(', ') || 'none'}`,
        `Dates: ${found.dates.map((d) => d.date).join(', ') || 'none'}`,
        `Amounts: ${found.amounts.map((a) => `${a.currency} ${a.amount}`).join(', ') || 'none'}`,
        `IBANs: ${found.ibans.map((i) => i.iban).join(', ') || 'none'}`,
        ...(found.invalid_ibans.length
          ? [`Invalid IBANs: ${found.invalid_ibans.map((i) => `${i.text} (${i.reason})`).join(', ')}`]
          : []),
      ]
      return { text: lines.join('\n'), data: { ...found } }
    },
  },
  {
    id: 'invoice-checker',
    name: 'Invoice checker',
    description:
      'Parses invoice lines (quantity × unit price), recomputes the subtotal, VAT (the stated rate, else 5%) and total, and reports every mismatch.',
    skill: {
      id: 'check-invoice',
      name: 'Invoice arithmetic check',
      description:
        'Lines like "2 x Item @ AED 150.00 = AED 300.00", then Subtotal, VAT (n%) and Total lines; amounts as decimal strings.',
      tags: ['invoice', 'vat', 'accounting', 'uae'],
      examples: ['2 x Pallet wrapping @ AED 150.00 = AED 300.00\nVAT 5%: AED 15.00\nTotal: AED 315.00'],
    },
    run(text) {
      const check = checkInvoice(text)
      const summary = check.ok
        ? `The invoice adds up: total ${check.currency} ${check.total.computed} (VAT ${check.vat.rate_percent}%).`
        : check.lines.length === 0
          ? 'No invoice lines (quantity × unit price) were found.'
          : [
              `${check.mismatches.length} mismatch(es); recomputed total ${check.currency} ${check.total.computed}:`,
              ...check.mismatches.map(
                (m) =>
                  `- ${m.field}: stated ${m.stated}, computed ${m.computed} (difference ${m.difference})`,
              ),
            ].join('\n')
      return { text: summary, data: { ...check } }
    },
  },
]
