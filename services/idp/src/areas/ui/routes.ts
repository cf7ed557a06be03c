import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { type App, html, type Kv, KvUnavailable, rateLimit } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { exportAccount } from '../accounts/export.ts'
import { beginSecondFactor } from '../mfa/pending.ts'
import { hasTotp } from '../mfa/totp.ts'
import { authenticate, recordEvent, requestContext } from '../accounts/service.ts'
import { recentEvents, userById } from '../accounts/index.ts'
import { consentsOf } from '../authorize/consent-store.ts'
import { PASSKEY_SCRIPT_PATH, passkeySection, passkeySignInForm } from '../passkeys/pages.ts'
import { type RelyingParty, registrationOptions, signInOptions } from '../passkeys/service.ts'
import { passkeysOf } from '../passkeys/index.ts'
import { changeForms } from '../accounts/change-routes.ts'
import { activitySection } from '../activity/pages.ts'
import { activityOf } from '../activity/service.ts'
import { pendingSection } from '../approvals/pages.ts'
import { pendingOf } from '../approvals/index.ts'
import { taskSection } from '../tasks/pages.ts'
import { offerSection } from '../credentials/pages.ts'
import { liveTasksOf } from '../tasks/index.ts'
import { CsrfOnly, checkCsrf, csrfToken } from '../sessions/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/pages.ts'
import { currentSession, endSession } from '../sessions/service.ts'
import { page, safeReturnTo, signedOut } from './layout.ts'
import { completeSignIn } from './sign-in.ts'

interface UiOptions {
  db: IdpDb
  /** Where passkeys belong (the issuer's host and origin). */
  rp: RelyingParty
  receipts: ReceiptWriter
  kv: Kv
  /** The issuer's origin, for the Origin check of form posts. */
  origin: string
  secureCookies: boolean
  /** Tells the clients of an ended session; returns the front-channel frames to load. */
  onSessionEnd: (session: { sid: string; user_id: string }) => Promise<string[]>
}

/**
 * The passkey challenge for the sign-in page, or undefined while the kv (Redis) does not answer: the
 * page then offers password sign-in alone rather than failing.
 */
async function passkeyOptionsIfAvailable(rp: RelyingParty) {
  try {
    return await signInOptions(rp)
  } catch (err) {
    if (err instanceof KvUnavailable) return undefined
    throw err
  }
}

const loginForm = (
  csrf: string,
  returnTo: string,
  passkeyOptions: object | undefined,
  email = '',
  error?: string,
) =>
  page(
    'Sign in',
    html`<h1>Sign in</h1>
      ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
      <form method="post" action="/ui/login">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="return_to" value="${returnTo}" />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${email}" />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      ${
        passkeyOptions
          ? passkeySignInForm(csrf, returnTo, passkeyOptions)
          : html`<p>Passkey sign-in is unavailable for a moment: sign in with your password.</p>`
      }`,
    [PASSKEY_SCRIPT_PATH],
  )

export function uiRoutes(app: App, { db, rp, receipts, kv, origin, secureCookies, onSessionEnd }: UiOptions) {
  const tags = ['pages']
  const pages = pageHooks({ db, origin })
  app.get(
    '/ui/login',
    {
      schema: {
        summary: 'The sign-in page',
        tags,
        querystring: Type.Object({
          return_to: Type.Optional(Type.String({ maxLength: 4000 })),
          login_hint: Type.Optional(Type.String({ maxLength: 320 })),
        }),
      },
    },
    async (request, reply) => {
      const returnTo = safeReturnTo(request.query.return_to)
      const form = loginForm(
        csrfToken(request, reply, secureCookies),
        returnTo,
        await passkeyOptionsIfAvailable(rp),
        request.query.login_hint ?? '',
      )
      return reply.type('text/html; charset=utf-8').send(form)
    },
  )

  app.post(
    '/ui/login',
    {
      // ten attempts a minute per address and account: enough for typos, too few for guessing
      preHandler: rateLimit(kv, 'login', {
        limit: 10,
        windowMs: 60_000,
        key: (request) => `${request.ip}:${String((request.body as { email?: string }).email).toLowerCase()}`,
      }),
      schema: {
        summary: 'Sign in with email and password',
        tags,
        body: Type.Object({
          email: Type.String({ minLength: 1, maxLength: 320 }),
          password: Type.String({ minLength: 1, maxLength: 1000 }),
          csrf: Type.String({ maxLength: 100 }),
          return_to: Type.Optional(Type.String({ maxLength: 4000 })),
        }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const returnTo = safeReturnTo(request.body.return_to)
      const user = await authenticate(db, request.body.email, request.body.password)
      if (!user) {
        // one message for an unknown email and a wrong password: no account enumeration
        const form = loginForm(
          csrfToken(request, reply, secureCookies),
          returnTo,
          await passkeyOptionsIfAvailable(rp),
          request.body.email,
          'Wrong email or password.',
        )
        return reply.code(401).type('text/html; charset=utf-8').send(form)
      }
      if (await hasTotp(db, user.id)) {
        await beginSecondFactor(kv, reply, { userId: user.id, returnTo }, secureCookies)
        return reply.redirect('/ui/mfa', 303)
      }
      return completeSignIn({ db, receipts }, request, reply, {
        userId: user.id,
        amr: ['pwd'],
        acr: 'urn:svc:pwd',
        returnTo,
        secure: secureCookies,
      })
    },
  )

  app.get(
    '/ui/account',
    {
      ...pages.signedIn(() => `/ui/login?return_to=${encodeURIComponent('/ui/account')}`),
      schema: { summary: 'The account page: who is signed in, and recent security activity', tags },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const user = await userById(db, session.user_id)
      const events = await recentEvents(db, session.user_id)
      const apps = await consentsOf(db, session.user_id)
      const passkeys = await passkeysOf(db, session.user_id)
      const csrf = csrfToken(request, reply, secureCookies)
      return reply.type('text/html; charset=utf-8').send(
        page(
          'Account',
          html`<h1>Your account</h1>
            <p>Signed in as <strong>${user?.email}</strong>${user?.name ? html` (${user.name})` : ''}.</p>
            <h2>Recent security activity</h2>
            <table aria-label="Recent security activity">
              ${events.map(
                (e) =>
                  html`<tr>
                    <td>${e.created_at.toISOString()}</td>
                    <td>${e.type}</td>
                    <td>${e.ip ?? ''}</td>
                    <td>${e.user_agent ?? ''}</td>
                  </tr>`,
              )}
            </table>
            <h2>Connected apps</h2>
            ${apps.length === 0 ? html`<p>No app has access to your account.</p>` : ''}
            ${apps.map(
              (a) =>
                html`<form method="post" action="/ui/account/consents/withdraw">
                  <input type="hidden" name="csrf" value="${csrf}" />
                  <input type="hidden" name="client_id" value="${a.client_id}" />
                  <p>
                    <strong>${a.client_name}</strong>: ${a.granted.join(', ')}
                    <button type="submit">Withdraw access</button>
                  </p>
                </form>`,
            )}
            ${pendingSection(await pendingOf(db, session.user_id))}
            ${activitySection(await activityOf(db, session.user_id))}
            ${taskSection(csrf, await liveTasksOf(db, session.user_id))}
            ${offerSection(csrf)}
            ${changeForms(csrf)}
            ${passkeySection(csrf, await registrationOptions(rp, user!), passkeys)}
            ${
              user?.password_hash && session.amr.includes('webauthn')
                ? html`<form method="post" action="/ui/account/password/remove">
                  <input type="hidden" name="csrf" value="${csrf}" />
                  <button type="submit">Remove my password (sign in with passkeys only)</button>
                </form>`
                : ''
            }
            <form method="post" action="/ui/account/totp">
            <input type="hidden" name="csrf" value="${csrf}" />
            <button type="submit">Set up an authenticator app</button>
          </form>
          <form method="post" action="/ui/account/export">
            <input type="hidden" name="csrf" value="${csrf}" />
            <button type="submit">Download my data</button>
          </form>
          <form method="post" action="/ui/logout">
              <input type="hidden" name="csrf" value="${csrf}" />
              <button type="submit">Sign out</button>
            </form>`,
          [PASSKEY_SCRIPT_PATH],
        ),
      )
    },
  )

  app.post(
    '/ui/account/export',
    {
      ...pages.form('sign in to export your account'),
      schema: {
        summary: 'Download everything kept about the signed-in account, as JSON',
        tags,
        body: CsrfOnly,
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const data = await exportAccount(db, session.user_id)
      await recordEvent(db, session.user_id, 'account_exported', requestContext(request))
      return reply
        .header('content-disposition', 'attachment; filename="svc-account.json"')
        .header('cache-control', 'no-store')
        .type('application/json; charset=utf-8')
        .send(JSON.stringify(data, null, 2))
    },
  )

  app.post(
    '/ui/logout',
    {
      schema: {
        summary: 'Sign out of this browser',
        tags,
        body: CsrfOnly,
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const session = await currentSession(db, request)
      await endSession(db, request, reply)
      if (!session) return reply.redirect('/ui/login', 303)
      await recordEvent(db, session.user_id, 'logout', requestContext(request))
      const frames = await onSessionEnd(session)
      if (frames.length === 0) return reply.redirect('/ui/login', 303)
      return reply.type('text/html; charset=utf-8').send(signedOut(frames, '/ui/login'))
    },
  )
}
