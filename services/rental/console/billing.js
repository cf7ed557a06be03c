// @ts-check
// Money on paper: invoices (issue one for an engagement's released payments, download its PDF) and
// the statement of a month (opening, every movement, closing; CSV download).
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { engagementLabel, TaskName } from './names.js'
import { Pager, usePaged } from './paging.js'
import { say } from './toast.js'
import { ActionButton, Empty, ErrorText, html, Loading, useLoad, When, listBody } from './ui.js'
import { separator } from './i18n.js'

const money = (m) => html`<bdi class="money">${m.display}</bdi>`

function IssueInvoice({ list, t, lang, onIssued }) {
  const [engagement, setEngagement] = useState('')
  if (list.length === 0) return null
  const issue = async () => {
    if (!engagement) throw new Error(t('invoice.pick'))
    const issued = await api('POST', '/api/invoices', { engagement_id: engagement })
    say(t('ctl.invoice_issued', { number: issued.number ?? '' }))
    onIssued()
  }
  return html`<form class="form card" onSubmit=${(e) => e.preventDefault()}>
    <h2>${t('invoice.issue_title')}</h2>
    <label for="invoice-engagement">${t('incident.engagement')}</label>
    <select id="invoice-engagement" value=${engagement} onChange=${(e) => setEngagement(e.currentTarget.value)}>
      <option value="">—</option>
      ${list.map((e) => html`<option key=${e.id} value=${e.id}>${engagementLabel(e, lang)}</option>`)}
    </select>
    <${ActionButton} kind="primary" label=${t('invoice.issue')} busy=${t('loading')} t=${t} action=${issue} />
  </form>`
}

export function Invoices({ t, lang }) {
  const [issued, setIssued] = useState(0)
  const list = usePaged(`/api/invoices?lang=${lang}`, { field: 'invoices', reloadKey: issued })
  const engagements = useLoad('/api/engagements?limit=50')
  const invoiceable = (engagements.data?.engagements ?? []).filter((e) => e.state !== 'pending')
  const rows = list.data?.invoices
  return html`<h1>${t('nav.invoices')}</h1>
    <${IssueInvoice} list=${invoiceable} t=${t} lang=${lang} onIssued=${() => setIssued((n) => n + 1)} />
    <${ErrorText} error=${list.error} t=${t} />
    ${
      rows && rows.length === 0
        ? html`<${Empty}>${
            invoiceable.length
              ? t('ctl.invoices_issue')
              : html`${t('ctl.invoices_hire_first')} <a href="#/market">${t('nav.market')}</a>`
          }<//>`
        : listBody(
            list,
            rows,
            t,
            'invoices.empty_console',
            () => html`<table class="list" data-testid="invoices"><thead><tr><th>${t('col.number')}</th><th>${t('col.issued')}</th>
              <th>${t('col.total')}</th><th>${t('invoice.balance')}</th><th>${t('col.state')}</th><th>${t('col.document')}</th></tr></thead>
            <tbody>${rows.map(
              (i) => html`<tr key=${i.id} data-invoice=${i.id}><td><code dir="ltr">${i.number}</code></td>
                <td><${When} iso=${i.issued_at} lang=${lang} /></td>
                <td>${money(i.totals.gross)} <small>${t('invoice.vat_included', { vat: i.totals.vat.display })}</small></td>
                <td data-testid="balance">${money(i.balance)}</td>
                <td>${t(i.paid?.reference === 'escrow' ? 'invoice.paid_escrow' : `invoice.${i.state}`)}</td>
                <td><a href=${`/api/invoices/${encodeURIComponent(i.id)}?format=pdf&lang=${lang}`}
                  download=${`${i.number}.pdf`}>${t('invoice.pdf_download', { number: i.number })}</a></td></tr>`,
            )}</tbody></table>
            <${Pager} page=${list.page} t=${t} lang=${lang} />`,
          )
    }`
}

/** The first day of this month and of the next, in UTC (the statement's default period). */
function thisMonth() {
  const now = new Date()
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))
  const to = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))
  return { from: from.toISOString().slice(0, 10), to: to.toISOString().slice(0, 10) }
}

export function Statements({ t, lang }) {
  const [period, setPeriod] = useState(thisMonth)
  const query = `from=${period.from}&to=${period.to}&lang=${lang}`
  const statement = useLoad(`/api/statements?${query}`)
  const s = statement.data
  const field = (name) =>
    html`<label for=${`statement-${name}`}>${t(`statement.${name}`)}</label>
      <input id=${`statement-${name}`} type="date" dir="ltr" value=${period[name]}
        onChange=${(e) => e.currentTarget.value && setPeriod({ ...period, [name]: e.currentTarget.value })} />`
  return html`<h1>${t('nav.statements')}</h1>
    <form class="form inline" onSubmit=${(e) => e.preventDefault()}>${field('from')}${field('to')}
      <a href=${`/api/statements?${query}&format=csv`} download="statement.csv">${t('statement.csv')}</a></form>
    <${ErrorText} error=${statement.error} t=${t} />
    ${
      !s
        ? statement.error
          ? null
          : html`<${Loading} t=${t} />`
        : html`<section class="card"><dl>
            <dt>${t('statement.opening')}</dt><dd>${money(s.opening.wallet)}${separator(lang)}${t('held')} ${money(s.opening.held)}</dd>
            <dt>${t('statement.closing')}</dt><dd data-testid="closing">${money(s.closing.wallet)}${separator(lang)}${t('held')} ${money(s.closing.held)}</dd>
            <dt>${t('statement.reconciles')}</dt><dd>${s.reconciles ? html`<span class="ok">✓</span>` : html`<span class="error">✗</span>`}</dd>
          </dl></section>
          ${
            s.movements.length === 0
              ? html`<${Empty}>${t('ctl.statement_empty')} <a href="#/wallet">${t('wallet.add')}</a>${separator(lang)}<a href="#/market">${t('nav.market')}</a><//>`
              : html`<table class="list" data-testid="movements"><thead><tr><th>${t('statement.at')}</th>
                  <th>${t('statement.kind')}</th><th>${t('wallet')}</th><th>${t('held')}</th><th>${t('task.title')}</th></tr></thead>
                <tbody>${s.movements.map(
                  (
                    m,
                    i,
                  ) => html`<tr key=${`${m.transfer_id}-${i}`}><td><${When} iso=${m.at} lang=${lang} /></td>
                    <td>${t(`statement.kind.${m.kind}`)}</td><td>${money(m.wallet)}</td><td>${money(m.held)}</td>
                    <td>${m.task_id ? html`<${TaskName} task=${{ ...m, id: m.task_id }} t=${t} />` : '—'}</td></tr>`,
                )}</tbody></table>`
          }`
    }`
}
