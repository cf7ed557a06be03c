import { html } from '@svc/kit'
import { type Lang, type Phrase, t } from '../../pages/i18n.ts'
import { at, phraseHtml } from '../../pages/layout.ts'
import type { ApprovalRow, pendingOf } from './store.ts'

const STATUS: Record<ApprovalRow['status'], Phrase> = {
  pending: 'This request is waiting for your answer.',
  approved: 'This request is approved.',
  denied: 'This request is refused.',
  expired: 'This request expired without an answer (a refusal).',
}

/** One request, with its detail and, while it is open, the two answers. */
export const approvalPage = (lang: Lang, row: ApprovalRow, clientName: string, csrf: string) =>
  html`<h1>${t(lang, '{client} asks you to approve', { client: clientName })}</h1>
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
        ? html`<p>
              ${phraseHtml(lang, 'Answer before {until}; no answer is a refusal.', { until: at(lang, row.expires_at) })}
            </p>
          <form method="post" action="/ui/approvals/${row.id}">
            <input type="hidden" name="csrf" value="${csrf}" />
            <button type="submit" name="decision" value="approve">${t(lang, 'Approve')}</button>
            <button type="submit" name="decision" value="refuse">${t(lang, 'Refuse')}</button>
          </form>`
        : html`<p>${t(lang, STATUS[row.status])}</p>`
    }`

/** The account page's list of requests waiting for an answer. */
export const pendingSection = (lang: Lang, pending: Awaited<ReturnType<typeof pendingOf>>) =>
  html`<h3>${t(lang, 'Requests waiting for you')}</h3>
    ${pending.length === 0 ? html`<p>${t(lang, 'No app is waiting for your approval.')}</p>` : ''}
    ${pending.map(
      (a) =>
        html`<p>
          <strong>${a.client_name}</strong>: <a href="/ui/approvals/${a.id}">${a.action}</a>
          (${phraseHtml(lang, 'until {until}', { until: at(lang, a.expires_at) })})
        </p>`,
    )}`
