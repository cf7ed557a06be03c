import { html } from '@svc/kit'
import type { activityOf } from './service.ts'

/** The account page's list of what apps reported from the ledger about the user. */
export const activitySection = (activity: Awaited<ReturnType<typeof activityOf>>) =>
  html`<h2>Activity reported by apps</h2>
    ${activity.length === 0 ? html`<p>No app has reported activity.</p>` : ''}
    <table aria-label="Activity reported by apps">
      ${activity.map(
        (a) =>
          html`<tr>
            <td>${a.issued_at.toISOString()}</td>
            <td>${a.client_name}</td>
            <td>${a.receipt_type}</td>
            <td><code>${a.receipt_hash}</code></td>
          </tr>`,
      )}
    </table>`
