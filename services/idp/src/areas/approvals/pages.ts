import { html } from '@svc/kit'
import { formatWhen, type Lang, t } from '../ui/i18n.ts'
import type { ApprovalRow, pendingOf } from './store.ts'

const STATUS: Record<ApprovalRow['status'], string> = {
  pending: 'waiting for your answer',
  approved: 'approved',
  denied: 'refused',
  expired: 'expired without an answer (a refusal)',
}

/** One request, with its detail and, while it is open, the two answers. */
export const approvalPage = (row: ApprovalRow, clientName: string, csrf: string) =>
  html`<h1>${clientName} asks you to approve</h1>
    <p><strong>${row.action}</strong></p>
    ${
      row.detail
        ? html`<table>
          ${Object.entries(row.detail).map(
            ([key, value]) =>
              html`<tr>
                <td>${key}</td>
                <td>${typeof value === 'string' ? value : JSON.stringify(value)}</td>
              </tr>`,
          )}
        </table>`
        : ''
    }
    ${
      row.status === 'pending'
        ? html`<p>Answer before ${row.expires_at.toISOString()}; no answer is a refusal.</p>
          <form method="post" action="/ui/approvals/${row.id}">
            <input type="hidden" name="csrf" value="${csrf}" />
            <button type="submit" name="decision" value="approve">Approve</button>
            <button type="submit" name="decision" value="refuse">Refuse</button>
          </form>`
        : html`<p>This request is ${STATUS[row.status]}.</p>`
    }`

/** The account page's list of requests waiting for an answer. */
export const pendingSection = (lang: Lang, pending: Awaited<ReturnType<typeof pendingOf>>) =>
  html`<h2>${t(lang, 'Requests waiting for you')}</h2>
    ${pending.length === 0 ? html`<p>${t(lang, 'No app is waiting for your approval.')}</p>` : ''}
    ${pending.map(
      (a) =>
        html`<p>
          <strong>${a.client_name}</strong>: <a href="/ui/approvals/${a.id}">${a.action}</a>
          (${t(lang, 'until {until}', { until: formatWhen(lang, a.expires_at) })})
        </p>`,
    )}`
