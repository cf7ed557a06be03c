// @ts-check
// The organization's money and automation: budgets, invoices (with their PDF), refunds, schedules
// and webhooks; budgets, schedules and webhooks made here too (forms.js). Each list is paged
// (paging.js) and says what to do when it is empty.
import { useState } from 'preact/hooks'
import { BudgetForm, ScheduleForm, WebhookForm } from './forms.js'
import { Pager, usePaged } from './paging.js'
import { Did, Empty, ErrorText, html, Loading, When } from './ui.js'

/** A list screen: the GET, its rows' key, its columns, and the words of its empty state. */
function ListScreen({ t, lang, path, field, title, empty, columns, form }) {
  // a form's new row shows on the first page, loaded again
  const [made, setMade] = useState(0)
  const list = usePaged(path, { field, reloadKey: made })
  const reload = () => setMade((n) => n + 1)
  const rows = list.data?.[field]
  return html`<h1>${t(title)}</h1>
    ${form ? html`<${form} t=${t} lang=${lang} reload=${reload} />` : null}
    <${ErrorText} error=${list.error} t=${t} />
    ${
      list.error && !rows
        ? null
        : !rows
          ? html`<${Loading} t=${t} />`
          : rows.length === 0
            ? html`<${Empty}>${t(empty)}<//>`
            : html`<table class="list" data-testid=${field}>
              <thead><tr>${columns.map(([label]) => html`<th key=${label}>${t(label)}</th>`)}</tr></thead>
              <tbody>${rows.map(
                (row) =>
                  html`<tr key=${row.id}>${columns.map(([label, cell]) => html`<td key=${label}>${cell(row)}</td>`)}</tr>`,
              )}</tbody>
            </table>
            <${Pager} page=${list.page} t=${t} lang=${lang} />`
    }`
}

const money = (m) => html`<bdi class="money">${m.display}</bdi>`
const code = (text) => (text ? html`<code dir="ltr">${text}</code>` : '—')

export const Budgets = ({ t, lang }) =>
  html`<${ListScreen} t=${t} lang=${lang} form=${BudgetForm} path=${`/api/budgets?lang=${lang}`} field="budgets" title="nav.budgets"
    empty="budgets.empty" columns=${[
      ['col.name', (b) => (b.name ? html`<bdi dir="auto">${b.name}</bdi>` : t(`budgets.scope.${b.scope}`))],
      ['col.limit', (b) => money(b.limit)],
      ['col.spent', (b) => money(b.spent)],
      ['col.left', (b) => money(b.left)],
      [
        'col.period',
        (b) =>
          html`<${When} iso=${b.period_start} lang=${lang} /> – <${When} iso=${b.period_end} lang=${lang} />`,
      ],
    ]} />`

export const Invoices = ({ t, lang }) =>
  html`<${ListScreen} t=${t} lang=${lang} path=${`/api/invoices?lang=${lang}`} field="invoices" title="nav.invoices"
    empty="invoices.empty" columns=${[
      ['col.number', (i) => code(i.number)],
      ['col.issued', (i) => html`<${When} iso=${i.issued_at} lang=${lang} />`],
      ['col.total', (i) => money(i.totals.gross)],
      ['col.state', (i) => t(`invoice.${i.state}`)],
      [
        'col.document',
        (i) =>
          html`<a href=${`/api/invoices/${encodeURIComponent(i.id)}?format=pdf&lang=${lang}`} download>${t('invoice.pdf')}</a>`,
      ],
    ]} />`

export const Refunds = ({ t, lang }) =>
  html`<${ListScreen} t=${t} lang=${lang} path=${`/api/refunds?lang=${lang}`} field="refunds" title="nav.refunds"
    empty="refunds.empty" columns=${[
      ['col.created', (r) => html`<${When} iso=${r.created_at} lang=${lang} />`],
      ['col.amount', (r) => money(r.amount)],
      ['col.state', (r) => t(`refund.${r.state}`)],
      ['col.reason', (r) => html`<bdi dir="auto">${r.reject_reason ?? r.reason}</bdi>`],
      ['eng.agent', (r) => html`<${Did} did=${r.agent_did} />`],
    ]} />`

export const Schedules = ({ t, lang }) =>
  html`<${ListScreen} t=${t} lang=${lang} form=${ScheduleForm} path="/api/schedules" field="schedules" title="nav.schedules"
    empty="schedules.empty" columns=${[
      ['col.name', (s) => (s.name ? html`<bdi dir="auto">${s.name}</bdi>` : code(s.id))],
      ['col.cron', (s) => html`${code(s.cron)} <small>${s.timezone}</small>`],
      ['col.state', (s) => t(`schedule.${s.state}`)],
      ['col.next', (s) => (s.next_runs[0] ? html`<${When} iso=${s.next_runs[0]} lang=${lang} />` : '—')],
      [
        'col.task',
        (s) =>
          s.last_task_id ? html`<a href=${`#/tasks/${s.last_task_id}`}>${code(s.last_task_id)}</a>` : '—',
      ],
    ]} />`

export const Webhooks = ({ t, lang }) =>
  html`<${ListScreen} t=${t} lang=${lang} form=${WebhookForm} path="/api/webhooks" field="webhooks" title="nav.webhooks"
    empty="webhooks.empty" columns=${[
      ['col.url', (w) => code(w.url)],
      ['col.events', (w) => w.event_types.join(', ')],
      ['col.created', (w) => html`<${When} iso=${w.created_at} lang=${lang} />`],
    ]} />`
