import { html } from '@svc/kit'
import { type Lang, t } from '../../pages/i18n.ts'
import { when } from '../../pages/layout.ts'
import type { activityOf } from './service.ts'

/** The account page's list of what apps reported from the ledger about the user. */
export const activitySection = (lang: Lang, activity: Awaited<ReturnType<typeof activityOf>>) =>
  html`<h3>${t(lang, 'Activity reported by apps')}</h3>
    ${activity.length === 0 ? html`<p>${t(lang, 'No app has reported activity.')}</p>` : ''}
    <table aria-label="${t(lang, 'Activity reported by apps')}">
      ${activity.map(
        (a) =>
          html`<tr>
            <td>${when(lang, a.issued_at)}</td>
            <td>${a.client_name}</td>
            <td>${a.receipt_type}</td>
            <td><code>${a.receipt_hash}</code></td>
          </tr>`,
      )}
    </table>`
