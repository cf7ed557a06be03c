// @ts-check
// The organization's budgets (made here too: forms.js) and refunds; invoices are billing.js's,
// schedules and webhooks automation.js's. Each list is paged (paging.js) and says what to do when
// it is empty.
import { useState } from 'preact/hooks'
import { BudgetForm } from './forms.js'
import { Pager, usePaged } from './paging.js'
import { CopyId } from './names.js'
import { Empty, ErrorText, html, Loading, When } from './ui.js'

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

export const Refunds = ({ t, lang }) =>
  html`<${ListScreen} t=${t} lang=${lang} path=${`/api/refunds?lang=${lang}`} field="refunds" title="nav.refunds"
    empty="refunds.empty" columns=${[
      ['col.created', (r) => html`<${When} iso=${r.created_at} lang=${lang} />`],
      ['col.amount', (r) => money(r.amount)],
      ['col.state', (r) => t(`refund.${r.state}`)],
      ['col.reason', (r) => html`<bdi dir="auto">${r.reject_reason ?? r.reason}</bdi>`],
      ['eng.agent', (r) => html`<${CopyId} label=${t('task.agent_did')} value=${r.agent_did} t=${t} />`],
    ]} />`
