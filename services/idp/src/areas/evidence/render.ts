/** The account evidence document in Markdown (CommonMark with GFM tables), in English, Arabic or both. */

export type Lang = 'en' | 'ar'

export interface Evidence {
  did: string
  email: string
  generatedAt: string
  events: Array<{ type: string; ip: string | null; created_at: Date }>
  consents: Array<{
    client_name: string
    granted: string[]
    granted_at: Date | null
    commitment: string | null
  }>
  approvals: Array<{
    client_name: string
    action: string
    status: string
    receipt: string | null
    created_at: Date
  }>
  activity: Array<{ client_name: string; receipt_type: string; issued_at: Date; receipt_hash: string }>
}

const WORDS = {
  en: {
    title: 'Account evidence',
    intro:
      'This document lists what the identity provider keeps about the account. Each ledger commitment is the hash of a signed receipt that anyone can check on the public ledger.',
    account: 'Account',
    generated: 'Generated at',
    events: 'Recent security activity',
    consents: 'Access granted to apps',
    approvals: 'Approvals asked by apps',
    activity: 'Activity reported by apps',
    time: 'Time',
    event: 'Event',
    ip: 'IP address',
    app: 'App',
    scopes: 'Scopes',
    granted: 'Granted at',
    commitment: 'Ledger commitment',
    action: 'Action',
    status: 'Status',
    receipt: 'Receipt',
    none: 'No entries.',
  },
  ar: {
    title: 'سجل أدلة الحساب',
    intro:
      'تسرد هذه الوثيقة ما يحتفظ به مزوّد الهوية عن الحساب. كل التزام في السجل هو بصمة لإيصال موقَّع يمكن لأي شخص التحقق منه في السجل العام.',
    account: 'الحساب',
    generated: 'أُنشئت في',
    events: 'النشاط الأمني الأخير',
    consents: 'الصلاحيات الممنوحة للتطبيقات',
    approvals: 'طلبات الموافقة من التطبيقات',
    activity: 'النشاط الذي أبلغت عنه التطبيقات',
    time: 'الوقت',
    event: 'الحدث',
    ip: 'عنوان IP',
    app: 'التطبيق',
    scopes: 'الصلاحيات',
    granted: 'تاريخ المنح',
    commitment: 'التزام السجل',
    action: 'الإجراء',
    status: 'الحالة',
    receipt: 'الإيصال',
    none: 'لا توجد إدخالات.',
  },
} as const

/** A table cell: Markdown's own characters escaped, and left-to-right values isolated in Arabic text. */
const cell = (value: string | null | undefined, lang: Lang) => {
  const text = (value ?? '—').replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')
  // U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE: a date or a hash keeps its own order
  return lang === 'ar' ? `\u2068${text}\u2069` : text
}
const code = (value: string | null | undefined) => (value ? `\`${value.replace(/`/g, "'")}\`` : '—')
const time = (date: Date | null) => (date ? date.toISOString() : null)

function table(lang: Lang, headers: string[], rows: string[][]) {
  if (!rows.length) return `${WORDS[lang].none}\n`
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n') + '\n'
}

function section(evidence: Evidence, lang: Lang) {
  const w = WORDS[lang]
  const c = (value: string | null | undefined) => cell(value, lang)
  return [
    `# ${w.title}`,
    '',
    w.intro,
    '',
    `- ${w.account}: ${code(evidence.did)} (${c(evidence.email)})`,
    `- ${w.generated}: ${c(evidence.generatedAt)}`,
    '',
    `## ${w.events}`,
    '',
    table(
      lang,
      [w.time, w.event, w.ip],
      evidence.events.map((e) => [c(time(e.created_at)), code(e.type), c(e.ip)]),
    ),
    `## ${w.consents}`,
    '',
    table(
      lang,
      [w.app, w.scopes, w.granted, w.commitment],
      evidence.consents.map((e) => [
        c(e.client_name),
        code(e.granted.join(' ')),
        c(time(e.granted_at)),
        code(e.commitment),
      ]),
    ),
    `## ${w.approvals}`,
    '',
    table(
      lang,
      [w.time, w.app, w.action, w.status, w.receipt],
      evidence.approvals.map((a) => [
        c(time(a.created_at)),
        c(a.client_name),
        c(a.action),
        code(a.status),
        code(a.receipt),
      ]),
    ),
    `## ${w.activity}`,
    '',
    table(
      lang,
      [w.time, w.app, w.event, w.receipt],
      evidence.activity.map((a) => [
        c(time(a.issued_at)),
        c(a.client_name),
        code(a.receipt_type),
        code(a.receipt_hash),
      ]),
    ),
  ].join('\n')
}

/**
 * Arabic is wrapped in a right-to-left block (`<div dir="rtl" lang="ar">`, with blank lines so
 * the Markdown inside is still Markdown), values that read left to right isolated within it.
 */
export function renderEvidence(evidence: Evidence, langs: Lang[]) {
  return langs
    .map((lang) =>
      lang === 'ar'
        ? `<div dir="rtl" lang="ar">\n\n${section(evidence, 'ar')}\n</div>\n`
        : section(evidence, 'en'),
    )
    .join('\n---\n\n')
}
