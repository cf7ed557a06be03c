// @ts-check
// Disputes (open on a task with an amount and a reason, withdraw), ratings of a completed task,
// and incidents (report one, list them).
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { formatNumber } from './i18n.js'
import { askSummary, CopyId, engagementLabel, TaskName } from './names.js'
import { Filter, Filters, PAGE_SIZE, Pager, usePaged } from './paging.js'
import { ActionButton, Empty, ErrorText, html, Loading, useLoad, When, listBody } from './ui.js'

/** "12.5" (AED, at most two decimals) as fils, exactly; null when it is not an amount. */
export function filsOf(text) {
  const match = /^\s*(\d{1,12})(?:[.,](\d{1,2}))?\s*$/.exec(text)
  if (!match) return null
  return Number(match[1]) * 100 + Number((match[2] ?? '0').padEnd(2, '0'))
}

const LIVE = new Set(['open', 'responded'])

/** Disputes, newest first (those of `taskId` only when given), each live one with its withdrawal. */
function DisputeRows({ t, lang, taskId, reloadKey = 0 }) {
  const [again, setAgain] = useState(0)
  // a task's own disputes are picked from the newest hundred; the screen of all of them is paged
  const list = usePaged(`/api/disputes?lang=${lang}`, {
    field: 'disputes',
    limit: taskId ? 100 : PAGE_SIZE,
    reloadKey: `${reloadKey}.${again}`,
  })
  const rows = (list.data?.disputes ?? []).filter((d) => !taskId || d.task_id === taskId)
  const withdraw = async (d) => {
    await api('POST', `/api/disputes/${encodeURIComponent(d.id)}/withdraw`, {})
    setAgain((n) => n + 1)
  }
  if (list.error && !list.data) return html`<${ErrorText} error=${list.error} t=${t} />`
  if (!list.data) return html`<${Loading} t=${t} />`
  if (rows.length === 0) return html`<${Empty}>${t(taskId ? 'dispute.none_here' : 'dispute.empty')}<//>`
  return html`<table class="list" data-testid="disputes"><thead><tr><th>${t('col.created')}</th><th>${t('col.amount')}</th>
      <th>${t('col.reason')}</th><th>${t('col.state')}</th><th></th></tr></thead>
    <tbody>${rows.map(
      (d) => html`<tr key=${d.id} data-dispute=${d.id} data-state=${d.state}>
        <td><${When} iso=${d.created_at} lang=${lang} />
          ${d.task_id && !taskId ? html`<br /><${TaskName} task=${{ ...d, id: d.task_id }} t=${t} />` : null}</td>
        <td><bdi class="money">${d.amount.display}</bdi></td>
        <td dir="auto">${d.reason}${d.response ? html`<br /><small>${t('dispute.response')}: <bdi dir="auto">${d.response.text}</bdi></small>` : null}</td>
        <td>${t(`dispute.${d.state}`)}${d.resolution ? html`<br /><small>${t(`dispute.outcome.${d.resolution.outcome}`)}</small>` : null}</td>
        <td>${
          LIVE.has(d.state)
            ? html`<${ActionButton} label=${t('dispute.withdraw')} busy=${t('loading')} t=${t} action=${() => withdraw(d)} />`
            : null
        }</td>
      </tr>`,
    )}</tbody></table>
    ${taskId ? null : html`<${Pager} page=${list.page} t=${t} lang=${lang} />`}`
}

/**
 * Asks for money back on a task: a dispute (`kind` "dispute": what was held or paid is frozen while
 * it is open) or a refund of its released payment (`kind` "refund"). An amount typed as a decimal,
 * and a reason.
 */
function AmountForm({ kind, path, task, t, lang, onDone }) {
  const [amount, setAmount] = useState((task.price_fils / 100).toFixed(2))
  const [reason, setReason] = useState('')
  const [open, setOpen] = useState(false)
  const fields = useFieldProblems()
  const submit = async () => {
    const fils = filsOf(amount)
    fields.check({
      [`${kind}-amount`]: fils === null || fils <= 0 ? t('amount.invalid') : null,
      [`${kind}-reason`]: reason.trim() ? null : t(`${kind}.reason_needed`),
    })
    await api('POST', path, { task_id: task.id, amount_fils: fils, reason: reason.trim() })
    setReason('')
    setOpen(false)
    onDone()
  }
  if (!open)
    return html`<button type="button" onClick=${() => setOpen(true)}>${t(`${kind}.open_button`)}</button>`
  return html`<form class="form" onSubmit=${(e) => e.preventDefault()}>
    <label for=${`${kind}-amount`}>${t('dispute.amount', { currency: task.currency })}</label>
    <input id=${`${kind}-amount`} inputmode="decimal" dir="ltr" required value=${amount} ...${fields.at(`${kind}-amount`)}
      onInput=${(e) => setAmount(e.currentTarget.value)} />
    ${fields.note(`${kind}-amount`)}
    <p class="hint">${t(`${kind}.amount_hint`, { max: formatNumber(task.price_fils / 100, lang, { style: 'currency', currency: task.currency }) })}</p>
    <${AskSummary} kind=${kind} fils=${filsOf(amount)} task=${task} t=${t} lang=${lang} />
    <label for=${`${kind}-reason`}>${t('col.reason')}</label>
    <textarea dir="auto" id=${`${kind}-reason`} rows="3" maxlength="2000" required value=${reason} ...${fields.at(`${kind}-reason`)}
      onInput=${(e) => setReason(e.currentTarget.value)}></textarea>
    ${fields.note(`${kind}-reason`)}
    <div class="actions"><${ActionButton} kind="primary" label=${t(`${kind}.submit`)} busy=${t('loading')} t=${t} action=${submit} />
      <button type="button" onClick=${() => setOpen(false)}>${t('cancel')}</button></div>
  </form>`
}

/** What the request asks, in one sentence, before it is sent (names.js). */
function AskSummary({ kind, fils, task, t, lang }) {
  const sentence = askSummary(kind, fils, task, t, lang)
  return sentence
    ? html`<p class="sign-summary" data-testid=${`${kind}-summary`} aria-live="polite">${sentence}</p>`
    : null
}

/** The refunds asked on a task, with their state (the provider accepts or rejects them). */
function RefundRows({ taskId, t, lang, reloadKey }) {
  const list = usePaged(`/api/refunds?lang=${lang}`, { field: 'refunds', limit: 100, reloadKey })
  const rows = (list.data?.refunds ?? []).filter((r) => r.task_id === taskId)
  if (list.error && !list.data) return html`<${ErrorText} error=${list.error} t=${t} />`
  if (!list.data) return html`<${Loading} t=${t} />`
  if (rows.length === 0) return html`<${Empty}>${t('refund.none_here')}<//>`
  return html`<table class="list" data-testid="refunds"><thead><tr><th>${t('col.created')}</th><th>${t('col.amount')}</th>
      <th>${t('col.reason')}</th><th>${t('col.state')}</th></tr></thead>
    <tbody>${rows.map(
      (r) => html`<tr key=${r.id} data-state=${r.state}><td><${When} iso=${r.created_at} lang=${lang} /></td>
        <td><bdi class="money">${r.requested.display}</bdi></td><td dir="auto">${r.reject_reason ?? r.reason}</td>
        <td>${t(`refund.${r.state}`)}</td></tr>`,
    )}</tbody></table>`
}

/** A completed task's rating: 1 to 5 and a comment, once (the rental refuses a second in words). */
function Rate({ task, t }) {
  const [score, setScore] = useState(5)
  const [comment, setComment] = useState('')
  const [done, setDone] = useState(/** @type {number | null} */ (null))
  const rate = async () => {
    await api('POST', `/api/tasks/${encodeURIComponent(task.id)}/rating`, {
      score: Number(score),
      ...(comment.trim() ? { comment: comment.trim() } : {}),
    })
    setDone(Number(score))
  }
  if (done) return html`<p class="ok" role="status">${t('rating.done', { n: done })}</p>`
  return html`<div class="form">
    <label for="rating-score">${t('rating.score')}</label>
    <select id="rating-score" value=${score} onChange=${(e) => setScore(e.currentTarget.value)}>
      ${[5, 4, 3, 2, 1].map((n) => html`<option key=${n} value=${n}>${'★'.repeat(n)} ${n}</option>`)}
    </select>
    <label for="rating-comment">${t('rating.comment')}</label>
    <textarea dir="auto" id="rating-comment" rows="2" maxlength="1000" value=${comment} onInput=${(e) => setComment(e.currentTarget.value)}></textarea>
    <${ActionButton} label=${t('rating.submit')} busy=${t('loading')} t=${t} action=${rate} />
  </div>`
}

/** Below a task: its rating (completed), its disputes and how to open one. */
export function TaskMoney({ task, t, lang }) {
  const [opened, setOpened] = useState(0)
  const [asked, setAsked] = useState(0)
  return html`${
    task.state === 'completed'
      ? html`<section class="card" aria-labelledby="rating-title"><h2 id="rating-title">${t('rating.title')}</h2>
          <${Rate} task=${task} t=${t} /></section>`
      : null
  }
    <section class="card" aria-labelledby="disputes-title" data-testid="task-disputes">
      <h2 id="disputes-title">${t('nav.disputes')}</h2>
      <${DisputeRows} t=${t} lang=${lang} taskId=${task.id} reloadKey=${opened} />
      <${AmountForm} kind="dispute" path="/api/disputes" task=${task} t=${t} lang=${lang} onDone=${() => setOpened((n) => n + 1)} />
    </section>
    ${
      task.state === 'completed'
        ? html`<section class="card" aria-labelledby="refunds-title" data-testid="task-refunds">
            <h2 id="refunds-title">${t('nav.refunds')}</h2>
            <p class="hint">${t('refund.intro')}</p>
            <${RefundRows} taskId=${task.id} t=${t} lang=${lang} reloadKey=${asked} />
            <${AmountForm} kind="refund" path="/api/refunds" task=${task} t=${t} lang=${lang} onDone=${() => setAsked((n) => n + 1)} />
          </section>`
        : null
    }`
}

export const Disputes = ({ t, lang }) => html`<h1>${t('nav.disputes')}</h1>
  <p class="hint">${t('dispute.intro')}</p>
  <${DisputeRows} t=${t} lang=${lang} />`

function ReportIncident({ t, lang, onReported }) {
  const [severity, setSeverity] = useState('sev3')
  const [summary, setSummary] = useState('')
  const [impact, setImpact] = useState('')
  const [engagement, setEngagement] = useState('')
  const engagements = useLoad('/api/engagements?limit=50')
  const report = async () => {
    if (!summary.trim() || !impact.trim()) throw new Error(t('incident.fill'))
    if (!engagement) throw new Error(t('incident.pick'))
    await api('POST', '/api/incidents', {
      severity,
      summary: summary.trim(),
      impact: impact.trim(),
      engagement_id: engagement,
    })
    setSummary('')
    setImpact('')
    onReported()
  }
  const list = engagements.data?.engagements ?? []
  return html`<section class="card" aria-labelledby="report-title"><h2 id="report-title">${t('incident.report')}</h2>
    ${
      engagements.data && list.length === 0
        ? html`<${Empty}>${t('incident.need_engagement')} <a href="#/market">${t('nav.market')}</a><//>`
        : html`<form class="form" onSubmit=${(e) => e.preventDefault()}>
      <label for="incident-engagement">${t('incident.engagement')}</label>
      <select id="incident-engagement" value=${engagement} onChange=${(e) => setEngagement(e.currentTarget.value)}>
        <option value="">—</option>
        ${list.map((e) => html`<option key=${e.id} value=${e.id}>${engagementLabel(e, lang)}</option>`)}
      </select>
      <label for="incident-severity">${t('incident.severity')}</label>
      <select id="incident-severity" value=${severity} onChange=${(e) => setSeverity(e.currentTarget.value)}>
        ${['sev1', 'sev2', 'sev3', 'sev4'].map((s) => html`<option key=${s} value=${s}>${t(`incident.${s}`)}</option>`)}
      </select>
      <label for="incident-summary">${t('incident.summary')}</label>
      <input id="incident-summary" dir="auto" maxlength="200" value=${summary} onInput=${(e) => setSummary(e.currentTarget.value)} />
      <label for="incident-impact">${t('incident.impact')}</label>
      <textarea dir="auto" id="incident-impact" rows="3" maxlength="2000" value=${impact} onInput=${(e) => setImpact(e.currentTarget.value)}></textarea>
      <${ActionButton} kind="primary" label=${t('incident.submit')} busy=${t('loading')} t=${t} action=${report} />
    </form>`
    }
  </section>`
}

export function Incidents({ t, lang }) {
  const [reported, setReported] = useState(0)
  const [state, setState] = useState('')
  const list = usePaged('/api/incidents', { field: 'incidents', filters: { state }, reloadKey: reported })
  const rows = list.data?.incidents
  return html`<h1>${t('nav.incidents')}</h1>
    <${ReportIncident} t=${t} lang=${lang} onReported=${() => setReported((n) => n + 1)} />
    <${Filters} t=${t}>
      <${Filter} id="incident-state" label=${t('list.filter_state')} value=${state} onChange=${setState}
        options=${[
          ['', t('list.all')],
          ['open', t('incident.open')],
          ['resolved', t('incident.resolved')],
        ]} />
    <//>
    <${ErrorText} error=${list.error} t=${t} />
    ${listBody(
      list,
      rows,
      t,
      'incident.empty',
      () => html`<table class="list" data-testid="incidents"><thead><tr><th>${t('col.created')}</th>
              <th>${t('incident.summary')}</th><th>${t('col.state')}</th><th>${t('eng.agent')}</th></tr></thead>
            <tbody>${rows.map(
              (i) => html`<tr key=${i.id}><td><${When} iso=${i.created_at} lang=${lang} /></td>
                <td dir="auto"><strong>${i.summary}</strong><br /><small>${i.impact}</small></td>
                <td>${t(i.resolved_at ? 'incident.resolved' : 'incident.open')}${i.resolution ? html`<br /><small dir="auto">${i.resolution}</small>` : null}</td>
                <td>${i.agent_did ? html`<${CopyId} label=${t('task.agent_did')} value=${i.agent_did} t=${t} />` : '—'}</td></tr>`,
            )}</tbody></table>
            <${Pager} page=${list.page} t=${t} lang=${lang} />`,
    )}`
}
