import { html } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { recentEvents, userById } from '../accounts/index.ts'
import { deleteForm, emailForm, keyBackupForm, passwordForm } from '../account-changes/index.ts'
import { hasTotp } from '../mfa/index.ts'
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
import type { Html } from '@svc/kit'

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
  return html`<h3>${t(lang, 'Where you are signed in')}</h3>
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

/** The apps of svc itself (the rental and its console) the person used: their homes, to go back to them. */
async function firstPartyApps(deps: AccountPageDeps, userId: string) {
  const used = await deps.authorize.firstPartyAppsOf(deps.db, userId)
  const clients = await deps.clients.anyAmong(
    deps.db,
    used.map((u) => u.client_id),
    ['client_id', 'redirect_uris'],
  )
  return used.map((app) => {
    const uri = clients.find((c) => c.client_id === app.client_id)?.redirect_uris[0]
    return { ...app, home: uri ? new URL(uri).origin : undefined }
  })
}
type FirstPartyApp = Awaited<ReturnType<typeof firstPartyApps>>[number]

/** No consent is asked of svc's own apps, so they are listed from sign-ins. */
const firstPartySection = (lang: Lang, used: FirstPartyApp[]) =>
  html`<h3>${t(lang, 'svc apps you use')}</h3>
    ${used.length === 0 ? html`<p>${t(lang, 'You have not signed in to an svc app yet.')}</p>` : ''}
    <ul class="svc-rows">
      ${used.map(
        (app) =>
          html`<li data-first-party="${app.client_id}">
            ${app.home ? html`<a href="${app.home}">${app.client_name}</a>` : app.client_name}
            <span
              >${t(lang, 'part of svc, no consent needed')}; ${t(lang, 'last sign-in')}
              ${app.last_used_at ? when(lang, new Date(app.last_used_at)) : ''}</span
            >
          </li>`,
      )}
    </ul>`

/** A section of the account page: a card with its heading, named for the tests and the skip links. */
const section = (name: string, title: string, body: Html) =>
  html`<section class="svc-card${name === 'danger' ? ' svc-danger' : ''}" data-section="${name}" aria-labelledby="section-${name}">
    <h2 id="section-${name}">${title}</h2>
    ${body}
  </section>`

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
  const apps1st = await firstPartyApps(deps, session.user_id)
  const twoStep = await hasTotp(db, session.user_id)
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}" />`
  return localPage(
    request,
    'Account',
    html`<h1>${t(lang, 'Your account')}</h1>
      ${section(
        'profile',
        t(lang, 'Profile'),
        html`<p>
            ${t(lang, 'Signed in as')} <strong>${user?.email}</strong>${user?.name ? html` (${user.name})` : ''}.
          </p>
          <div class="svc-actions">
            ${apps1st
              .filter((app) => app.home)
              .map(
                (app, i) =>
                  html`<a class="svc-button${i === 0 ? ' primary' : ''}" href="${app.home}" data-open-app
                    >${t(lang, 'Open {app}', { app: app.client_name })}</a
                  >`,
              )}
            <form method="post" action="/ui/logout">${hidden}<button type="submit">${t(lang, 'Sign out')}</button></form>
          </div>
          ${emailForm(lang, csrf)}`,
      )}
      ${section(
        'sign-in',
        t(lang, 'How you sign in'),
        html`<h3>${t(lang, 'Password')}</h3>
          ${passwordForm(lang, csrf)}
          ${
            user?.password_hash && session.amr.includes('webauthn')
              ? html`<form method="post" action="/ui/account/password/remove" class="svc-actions">
                  ${hidden}
                  <button type="submit">${t(lang, 'Remove my password (sign in with passkeys only)')}</button>
                </form>`
              : ''
          }
          ${passkeySection(lang, csrf, await registrationOptions(rp, user!), passkeys)}
          <h3>${t(lang, 'Two-step sign-in')}</h3>
          <p data-two-step="${twoStep ? 'on' : 'off'}">
            ${t(lang, twoStep ? 'On: after your password, an authenticator app gives a code.' : 'Off: your password alone signs you in.')}
          </p>
          <form method="post" action="/ui/account/totp">
            ${hidden}
            <button type="submit">${t(lang, twoStep ? 'Set up another authenticator app' : 'Set up an authenticator app')}</button>
          </form>`,
      )}
      ${section(
        'sessions',
        t(lang, 'Sessions and devices'),
        html`${sessionsSection(lang, csrf, session.sid, sessions)}
          <h3>${t(lang, 'Recent security activity')}</h3>
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
          </table>`,
      )}
      ${section(
        'apps',
        t(lang, 'Apps'),
        html`${firstPartySection(lang, apps1st)}
          <h3>${t(lang, 'Connected apps')}</h3>
          ${apps.length === 0 ? html`<p>${t(lang, 'No app has access to your account.')}</p>` : ''}
          <ul class="svc-rows">
            ${apps.map(
              (a) =>
                html`<li>
                  <span><strong>${a.client_name}</strong>: ${a.granted.join(', ')}</span>
                  <form method="post" action="/ui/account/consents/withdraw">
                    ${hidden}
                    <input type="hidden" name="client_id" value="${a.client_id}" />
                    <button type="submit">${t(lang, 'Withdraw access')}</button>
                  </form>
                </li>`,
            )}
          </ul>
          ${pendingSection(lang, await pendingOf(db, session.user_id))}
          ${taskSection(lang, csrf, await liveTasksOf(db, session.user_id))}
          ${activitySection(lang, await deps.activity.of(session.user_id))}`,
      )}
      ${section(
        'data',
        t(lang, 'Your data'),
        html`<h3>${t(lang, 'Download my data')}</h3>
          <form method="post" action="/ui/account/export">
            ${hidden}
            <p class="svc-hint">${t(lang, 'Everything kept about your account, in one file (JSON).')}</p>
            <button type="submit">${t(lang, 'Download my data')}</button>
          </form>
          ${keyBackupForm(lang, csrf)} ${offerSection(lang, csrf)}`,
      )}
      ${section('danger', t(lang, 'Danger zone'), html`<h3>${t(lang, 'Delete your account')}</h3>${deleteForm(lang, csrf)}`)}`,
    [PASSKEY_SCRIPT_PATH],
    'wide',
  )
}
