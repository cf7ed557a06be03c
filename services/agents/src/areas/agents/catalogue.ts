/** The built-in agents: what each one is called, what its card says, and the skill it runs. */
import { extract } from '../../skills/extract.ts'
import { checkInvoice } from '../../skills/invoice.ts'
import { describeCall, fileNote } from '../../skills/notes.ts'
import { summarise } from '../../skills/summarise.ts'
import { fetchPage, onlyUrl, pageText, webToolOf } from '../../skills/web.ts'
import type { ReadFile } from './files.ts'
import { TEAM_LEAD } from './team-lead.ts'

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
  /**
   * The media types its messages' parts may have (the card's input modes; text/plain when unset).
   * An agent that reads files takes them as file parts by URL (`readsFiles`).
   */
  inputModes?: string[]
  /** It fetches its messages' file parts (A2A `url` parts) and `run` is given their texts. */
  readsFiles?: boolean
  /**
   * `options` is the message's metadata (e.g. `max_sentences` for the summariser); `files` the texts
   * of its file parts (`readsFiles`); `env` what the agent knows of its siblings (the team lead asks
   * them through the rental).
   */
  run(
    text: string,
    options: Record<string, unknown>,
    files: ReadFile[],
    env: AgentEnv,
  ): SkillOutput | Promise<SkillOutput>
}

export interface AgentEnv {
  /** The did:key of a built-in agent of this service, by id. */
  didOf(id: string): string | undefined
  /** How long a held tool call's outcome is waited for (AGENTS_TOOL_WAIT_MS); 0: not waited for. */
  toolWaitMs: number
  /** AGENTS_FILE_ORIGINS: the origins a message's URLs may reach on a private address (null: any, development). */
  origins: string[] | null
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
        'Returns the top sentences (3 by default; message metadata max_sentences, 1-50) in their original order. A message that is only a URL is read with the rental’s web tool when the engagement has a web policy.',
      tags: ['summary', 'text', 'extractive'],
      examples: ['A paragraph or a document to summarise.'],
    },
    // a task's files (text, Markdown, CSV) are read from their URLs: the summary is of their text
    inputModes: ['text/plain', 'text/markdown', 'text/csv'],
    readsFiles: true,
    async run(text, options, files, env) {
      // a message that is only a URL, with the web tool given: the page is read through the rental
      const web = webToolOf(options)
      const pageUrl = onlyUrl(text)
      if (files.length === 0 && web && pageUrl) {
        const page = await fetchPage(web, pageUrl, env.origins)
        if (page.state !== 'fetched' || page.text === null)
          return {
            text: `The page could not be read: ${page.error ?? `the rental answered ${page.status}`}`,
            data: { fetched: null, web_error: page.error, web_status: page.status },
          }
        const result = summarise(pageText(page.text), maxSentences(options))
        const { text: _t, ...fetched } = page
        return { text: result.summary, data: { ...result, fetched: { url: pageUrl, ...fetched } } }
      }
      if (files.length === 0) {
        const result = summarise(text, maxSentences(options))
        return { text: result.summary, data: { ...result } }
      }
      // the message's text is the instruction; what is summarised is the files' text
      const result = summarise(files.map((f) => f.text).join('\n\n'), maxSentences(options))
      return {
        text: result.summary,
        data: {
          ...result,
          files: files.map((f) => ({ filename: f.filename, sha256: f.sha256, size_bytes: f.size_bytes })),
        },
      }
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
  {
    id: 'note-taker',
    name: 'Note taker',
    description:
      'Files the text as a note in the client’s notes tool server, through the rental’s connect path: it lists the newest notes, then asks to create one (which the client’s policy may hold for approval: it waits a while for the outcome).',
    skill: {
      id: 'file-note',
      name: 'File a note',
      description:
        'Needs a connection on the engagement (POST /api/engagements/{id}/connect); the first line of the text is the note’s title.',
      tags: ['notes', 'tools', 'mcp'],
      examples: ['Call with ACME on Monday\nThey want the revised quote by Friday.'],
    },
    async run(text, options, _files, env) {
      const filed = await fileNote(text, options, env.origins, env.toolWaitMs)
      if (!filed.connected)
        return {
          text: 'No tool connection was given for this task: nothing was filed.',
          data: { connected: false, calls: [] },
        }
      return {
        text: [`Filing “${filed.title}”:`, ...filed.calls.map(describeCall)].join('\n'),
        data: { connected: true, title: filed.title, calls: filed.calls },
      }
    },
  },
  TEAM_LEAD,
]
