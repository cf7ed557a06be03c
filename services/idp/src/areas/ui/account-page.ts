import { html } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { recentEvents, userById } from '../accounts/index.ts'
import { changeForms } from '../account-changes/index.ts'
import { activitySection } from '../activity/index.ts'
import type { ActivityService } from '../activity/index.ts'
import { pendingSection } from '../approvals/index.ts'
import { pendingOf } from '../approvals/index.ts'
import { consentsOf } from '../authorize/index.ts'
import type { AuthorizeService } from '../authorize/index.ts'
import type { ClientsService } from '../clients/index.ts'
import { offerSection } from '../credentials/index.ts'
import { PASSKEY_SCRIPT_PATH, passkeySection } from '../passkeys/index.ts'
import { type RelyingParty, registrationOptions } from '../passkeys/index.ts'
import { passkeysOf } from '../passkeys/index.ts'
import type { SessionsService } from '../sessions/index.ts'
import type { Session } from '../sessions/index.ts'
import { taskSection } from '../tasks/index.ts'
import { liveTasksOf } from '../tasks/index.ts'
import { describeDevice, type Lang, langOf, type Phrase, t } from '../../pages/i18n.ts'
import { localPage, when } from '../../pages/layout.ts'

/** Security events as people read them; a type not listed shows as it is stored. */
const EVENTS: Record<string, Phrase> = {
  login: 'Signed in',
  'login.new_device': 'Signed in from a new device',
  logout: 'Signed out',
  register: 'Account created',
  email_verified: 'Email address confirmed',
  email_changed: 'Email address changed',
  password_changed: 'Password changed',
  password_reset: 'Password reset',
  password_removed: 'Password removed',
  passkey_added: 'Passkey added',
  passkey_removed: 'Passkey removed',
  totp_enrolled: 'Authenticator app set up',
  consent_withdrawn: 'App access withdrawn',
  account_exported: 'Data downloaded',
  key_backup_exported: 'Key backup downloaded',
  device_approved: 'Device connected',
  other_sessions_ended: 'Other sessions signed out',
}

/** Where the account is signed in: each live session, this one marked, and the way to end the others. */
function sessionsSection(lang: Lang, csrf: string, current: string, sessions: LiveSession[]) {
  const others = sessions.filter((s) => s.sid !== current)
  return html`<h2>${t(lang, 'Where you are signed in')}</h2>
    <table aria-label="${t(lang, 'Where you are signed in')}">
      ${sessions.map(
        (s) =>
          html`<tr data-session="${s.sid === current ? 'current' : 'other'}">
            <td>${describeDevice(lang, s.user_agent)}</td>
            <td>${s.ip ?? ''}</td>
            <td>${t(lang, 'signed in')} ${when(lang, s.auth_time)}</td>
            <td>${s.sid === current ? html`<strong>${t(lang, 'This browser')}</strong>` : ''}</td>
          </tr>`,
      )}
    </table>
    ${
      others.length
        ? html`<form method="post" action="/ui/account/sessions/end-others">
            <input type="hidden" name="csrf" value="${csrf}" />
            <button type="submit">${t(lang, 'Sign out other sessions')} (${others.length})</button>
          </form>`
        : html`<p>${t(lang, 'You are signed in nowhere else.')}</p>`
    }`
}
type LiveSession = Awaited<ReturnType<SessionsService['liveOf']>>[number]

/** The apps of svc itself (the rental and its console): no consent is asked, so they are listed from sign-ins. */
async function firstPartySection(deps: AccountPageDeps, lang: Lang, userId: string) {
  const used = await deps.authorize.firstPartyAppsOf(deps.db, userId)
  const clients = await deps.clients.anyAmong(
    deps.db,
    used.map((u) => u.client_id),
    ['client_id', 'redirect_uris'],
  )
  const homeOf = (clientId: string) => {
    const uri = clients.find((c) => c.client_id === clientId)?.redirect_uris[0]
    return uri ? new URL(uri).origin : undefined
  }
  return html`<h2>${t(lang, 'svc apps you use')}</h2>
    ${used.length === 0 ? html`<p>${t(lang, 'You have not signed in to an svc app yet.')}</p>` : ''}
    <ul>
      ${used.map((app) => {
        const home = homeOf(app.client_id)
        return html`<li data-first-party="${app.client_id}">
          ${home ? html`<a href="${home}">${app.client_name}</a>` : app.client_name}:
          ${t(lang, 'part of svc, no consent needed')}; ${t(lang, 'last sign-in')}
          ${app.last_used_at ? when(lang, new Date(app.last_used_at)) : ''}
        </li>`
      })}
    </ul>`
}

/** What the account page reads beyond its own tables: the areas that show a part of it. */
export interface AccountPageDeps {
  db: IdpDb
  rp: RelyingParty
  sessions: SessionsService
  authorize: AuthorizeService
  clients: ClientsService
  activity: ActivityService
}

/** The whole account page of the signed-in person, in the request's language. */
export async function accountPage(
  deps: AccountPageDeps,
  request: FastifyRequest,
  session: Session,
  csrf: string,
) {
  const { db, rp, sessions: sessionsOf } = deps
  const lang = langOf(request)
  const user = await userById(db, session.user_id)
  const events = await recentEvents(db, session.user_id)
  const apps = await consentsOf(db, session.user_id)
  const passkeys = await passkeysOf(db, session.user_id)
  const sessions = await sessionsOf.liveOf(db, session.user_id)
  return localPage(
    request,
    'Account',
    html`<h1>${t(lang, 'Your account')}</h1>
      <p>
        ${t(lang, 'Signed in as')} <strong>${user?.email}</strong>${user?.name ? html` (${user.name})` : ''}.
      </p>
      ${sessionsSection(lang, csrf, session.sid, sessions)}
      <h2>${t(lang, 'Recent security activity')}</h2>
      <table aria-label="${t(lang, 'Recent security activity')}">
        ${events.map(
          (e) =>
            html`<tr>
              <td>${when(lang, e.created_at)}</td>
              <td data-event="${e.type}">${EVENTS[e.type] ? t(lang, EVENTS[e.type]!) : e.type}</td>
              <td>${e.user_agent ? describeDevice(lang, e.user_agent) : ''}</td>
              <td>${e.ip ?? ''}</td>
            </tr>`,
        )}
      </table>
      ${await firstPartySection(deps, lang, session.user_id)}
      <h2>${t(lang, 'Connected apps')}</h2>
      ${apps.length === 0 ? html`<p>${t(lang, 'No app has access to your account.')}</p>` : ''}
      ${apps.map(
        (a) =>
          html`<form method="post" action="/ui/account/consents/withdraw">
            <input type="hidden" name="csrf" value="${csrf}" />
            <input type="hidden" name="client_id" value="${a.client_id}" />
            <p>
              <strong>${a.client_name}</strong>: ${a.granted.join(', ')}
              <button type="submit">${t(lang, 'Withdraw access')}</button>
            </p>
          </form>`,
      )}
      ${pendingSection(lang, await pendingOf(db, session.user_id))}
      ${activitySection(lang, await deps.activity.of(session.user_id))}
      ${taskSection(lang, csrf, await liveTasksOf(db, session.user_id))}
      ${offerSection(lang, csrf)}
      ${changeForms(lang, csrf)}
      ${passkeySection(lang, csrf, await registrationOptions(rp, user!), passkeys)}
      ${
        user?.password_hash && session.amr.includes('webauthn')
          ? html`<form method="post" action="/ui/account/password/remove">
              <input type="hidden" name="csrf" value="${csrf}" />
              <button type="submit">${t(lang, 'Remove my password (sign in with passkeys only)')}</button>
            </form>`
          : ''
      }
      <form method="post" action="/ui/account/totp">
        <input type="hidden" name="csrf" value="${csrf}" />
        <button type="submit">${t(lang, 'Set up an authenticator app')}</button>
      </form>
      <form method="post" action="/ui/account/export">
        <input type="hidden" name="csrf" value="${csrf}" />
        <button type="submit">${t(lang, 'Download my data')}</button>
      </form>
      <form method="post" action="/ui/logout">
        <input type="hidden" name="csrf" value="${csrf}" />
        <button type="submit">${t(lang, 'Sign out')}</button>
      </form>`,
    [PASSKEY_SCRIPT_PATH],
  )
}
