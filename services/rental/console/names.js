// @ts-check
// How the console names things for a person: states in words, money and durations, what a signed
// body says in one sentence, and ids and DIDs in small print with a copy button (never the label).
import { useState } from 'preact/hooks'
import { formatDate, formatFils, formatNumber, separator } from './i18n.js'
import { html } from './ui.js'

/** A task state's catalogue key (`input-required` → `state.input_required`). */
export const stateKey = (state) => `state.${String(state).replace(/-/g, '_')}`

/** A task's state as a badge in words. */
export const TaskState = ({ state, t }) =>
  html`<span class=${`state state-${state}`} data-state=${state}>${t(stateKey(state))}</span>`

/**
 * A task named for a person, linking to it: its job's title (or its agent's name), "for" the agent,
 * and its input's first words; its id only in the link.
 */
export const TaskName = ({ task, t }) =>
  html`<a href=${`#/tasks/${task.id}`} data-testid="task-name">${task.job_title ?? task.agent_name ?? t('task.untitled')}</a>${
    task.job_title && task.agent_name
      ? html`<small class="hint"> ${t('task.for', { agent: task.agent_name })}</small>`
      : null
  }${task.input_preview ? html`<br /><small class="preview" dir="auto">${task.input_preview}</small>` : null}`

/** An engagement as a choice in a list: its job, its agent and when it was made (its id never the label). */
export const engagementLabel = (e, lang) =>
  [e.job_title ?? e.job_id, e.agent_name, formatDate(e.created_at, lang)]
    .filter(Boolean)
    .join(separator(lang))

/**
 * An agent by its display name, its DID behind a copy button (in small print when it has no name);
 * `children` (its facts: a share, a state) stand on the name's line, before the copy button's.
 */
export const AgentName = ({ name, did, t, children = null }) =>
  name
    ? html`<bdi dir="auto" class="agent-name">${name}</bdi>${children}<br /><${CopyId} label=${t('task.agent_did')} value=${did} t=${t} compact=${true} />`
    : html`<${CopyId} label=${t('task.agent_did')} value=${did} t=${t} />${children}`

/** `parts` (the null ones left out) with the language's separator between them, as one line reads. */
export const dotted = (parts, lang) =>
  parts
    .filter((part) => part !== null && part !== undefined && part !== false)
    .flatMap((part, i) => (i === 0 ? [part] : [separator(lang), part]))

/** A text's first words (at most `max` characters, cut at a space, with an ellipsis), as the API's `input_preview`. */
export function firstWords(text, max = 80) {
  if (!text) return null
  const flat = String(text).replace(/\s+/g, ' ').trim()
  if (flat.length <= max) return flat
  const cut = flat.slice(0, max)
  const space = cut.lastIndexOf(' ')
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** What an agent reports of its A2A state (`TASK_STATE_COMPLETED`) in the console's words for that state. */
export function agentStateWords(value, t) {
  const match = /^TASK_STATE_([A-Z_]+)$/.exec(String(value))
  if (!match) return String(value)
  const key = stateKey(match[1].toLowerCase())
  const words = t(key)
  return words === key ? String(value) : words
}

/** How long something took, in the largest unit that reads well (seconds, minutes, hours). */
export function duration(ms, lang) {
  if (ms === null || ms === undefined) return '—'
  const [value, unit] =
    ms < 60_000 ? [ms / 1000, 'second'] : ms < 3_600_000 ? [ms / 60_000, 'minute'] : [ms / 3_600_000, 'hour']
  return formatNumber(value, lang, { style: 'unit', unit, unitDisplay: 'long', maximumFractionDigits: 1 })
}

/** The escrow's state as the person thinks of their money: to sign, held, paid, returned, withdrawn. */
export const paymentWords = (escrowState, priceFils, t) =>
  escrowState ? t(`pay.${escrowState}`) : priceFils === 0 ? t('pay.free') : t('pay.none')

/** How many characters of a hash `CopyId` shows when `short`: enough to tell two apart by eye. */
const SHORT_ID = 10

/**
 * An id or a DID in small print, left to right, with a button that copies it (the full value also
 * in the button's `data-copy`); `compact`: the button alone ("Copy the agent DID"), the value in its
 * tooltip (a card or a row with a name); `short`: the value's first characters and an ellipsis, the
 * whole in its tooltip (a hash no one reads in full).
 */
export function CopyId({ label, value, t, compact = false, short = false }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await globalThis.navigator.clipboard.writeText(value)
      setCopied(true)
      globalThis.setTimeout(() => setCopied(false), 2000)
    } catch {}
  }
  if (compact)
    return html`<small class="id-line"><button type="button" class="copy" title=${value} data-copy=${value} onClick=${copy}>${copied ? t('copy.done') : t('copy.label', { what: label })}</button></small>`
  const cut = short && value.length > SHORT_ID + 4
  return html`<small class="id-line"><span>${label}</span> <code dir="ltr" class=${cut ? 'did short' : 'did'} title=${cut ? value : undefined}>${cut ? `${value.slice(0, SHORT_ID)}…` : value}</code>
    <button type="button" class="copy" aria-label=${t('copy.label', { what: label })} data-copy=${value} onClick=${copy}>${copied ? t('copy.done') : t('copy')}</button></small>`
}

/**
 * Why this browser cannot sign for an engagement: it names another client key. The sentence says
 * what to do; the two keys follow, short, each with its copy button (a DID in the sentence would
 * run off a phone's screen).
 */
export function OtherKey({ engagementKey, browserKey, t, alert = false }) {
  return html`<div class="warning" role=${alert ? 'alert' : undefined} data-testid="other-key">
    <p>${t('sign.other_key')}</p>
    <${CopyId} label=${t('sign.engagement_key')} value=${engagementKey} t=${t} short />
    ${browserKey ? html`<${CopyId} label=${t('sign.browser_key')} value=${browserKey} t=${t} short />` : html`<small>${t('sign.no_browser_key')}</small>`}
  </div>`
}

/**
 * One plain sentence for asking money back on a task before it is sent: a refund (`kind` "refund")
 * or a dispute; null while the amount is not one.
 */
export function askSummary(kind, fils, task, t, lang) {
  if (fils === null || !(fils > 0)) return null
  return t(`${kind}.summary`, {
    amount: formatFils(fils, task.currency ?? 'AED', lang),
    paid: task.price?.display ?? formatFils(task.price_fils, task.currency ?? 'AED', lang),
    agent: task.agent_name ?? t('sign.the_agent'),
    job: task.job_title ?? t('task.untitled'),
  })
}

const percent = (bps, lang) =>
  formatNumber(bps / 10_000, lang, { style: 'percent', maximumFractionDigits: 2 })
const hours = (seconds, lang) =>
  seconds % 3600 === 0
    ? formatNumber(seconds / 3600, lang, { style: 'unit', unit: 'hour', unitDisplay: 'long' })
    : duration(seconds * 1000, lang)

/**
 * One plain sentence for a body the person signs (SLA, escrow, release, addendum), from the body's
 * own fields and the engagement's names (`job_title`, `agent_name`, `provider_name`); null for a
 * body the console has no sentence for (its fields stay behind the disclosure).
 */
export function summaryOf(body, names, t, lang) {
  const agent = names?.agent_name ?? t('sign.the_agent')
  const money = (fils) => formatFils(fils, body.currency ?? 'AED', lang)
  switch (body.type) {
    case 'svc.sla': {
      const levels = body.service_levels ?? { latency_p95_ms: 30_000, credit_bps_per_breach: 500 }
      return t('sign.summary.sla', {
        price: money(body.price_fils),
        job: names?.job_title ?? body.job_id,
        agent,
        provider: names?.provider_name ?? t('sign.the_provider'),
        p95: duration(levels.latency_p95_ms, lang),
        credit: percent(levels.credit_bps_per_breach, lang),
        kept: hours(body.terms?.output_retention_s ?? 3600, lang),
        fee: percent(body.terms?.fee_bps ?? 0, lang),
      })
    }
    case 'svc.escrow':
      return t(body.task_id ? 'sign.summary.escrow_task' : 'sign.summary.escrow', {
        amount: money(body.amount_fils),
        agent,
        when: formatDate(body.issued_at, lang),
      })
    case 'svc.release':
      return t('sign.summary.release', {
        amount: money(body.amount_fils),
        agent,
        fee: money(body.fee_fils),
        vat: money(body.vat_fils ?? 0),
      })
    case 'svc.addendum':
      return t('sign.summary.addendum', {
        agent,
        from: body.from_version ?? t('version.initial'),
        to: body.to_version,
        when: formatDate(body.released_at, lang),
      })
    default:
      return null
  }
}
