import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { type App, html, type Kv, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { recordEvent, requestContext } from '../accounts/index.ts'
import { userById } from '../accounts/index.ts'
import { CsrfOnly, checkCsrf, csrfToken } from '../../pages/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { type Lang, langOf, t } from '../../pages/i18n.ts'
import { sendLocalMessage, sendLocalPage } from '../../pages/layout.ts'
import { completeSignIn } from '../accounts/index.ts'
import { endSecondFactor, failSecondFactor, pendingOf } from './pending.ts'
import { beginEnrolment, verifyTotp } from './totp.ts'

interface MfaOptions {
  db: IdpDb
  receipts: ReceiptWriter
  kv: Kv
  sealer: Sealer
  origin: string
  secureCookies: boolean
}

const codeForm = (lang: Lang, action: string, csrf: string, intro: unknown, error?: string) =>
  html`${intro}
    <form method="post" action="${action}">
      <input type="hidden" name="csrf" value="${csrf}" />
      <div class="svc-field">
        <label for="code">${t(lang, 'Six-digit code from your authenticator app')}</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required
          ${error ? html`aria-invalid="true" aria-describedby="code-error"` : ''} />
        ${error ? html`<p class="svc-field-error" id="code-error" role="alert">${error}</p>` : ''}
      </div>
      <button type="submit" class="primary">${t(lang, 'Continue')}</button>
    </form>`

const Code = Type.Object({ csrf: Type.String({ maxLength: 100 }), code: Type.String({ maxLength: 10 }) })

export function mfaRoutes(app: App, { db, receipts, kv, sealer, origin, secureCookies }: MfaOptions) {
  const tags = ['pages']
  // a signed-out browser starts again from the sign-in page
  const signedIn = pageHooks({ db, origin }).formSigningIn(() => '/ui/login')
  app.get(
    '/ui/mfa',
    { schema: { summary: 'The second-factor step of sign-in', tags } },
    async (request, reply) => {
      if (!(await pendingOf(kv, request))) return reply.redirect('/ui/login', 303)
      const lang = langOf(request)
      return sendLocalPage(
        reply,
        200,
        'Second factor',
        codeForm(
          lang,
          '/ui/mfa',
          csrfToken(request, reply, secureCookies),
          html`<h1>${t(lang, 'Second factor')}</h1>`,
        ),
      )
    },
  )

  app.post(
    '/ui/mfa',
    { schema: { summary: 'Complete sign-in with a TOTP code', tags, body: Code } },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const pending = await pendingOf(kv, request)
      if (!pending) return reply.redirect('/ui/login', 303)
      if (!(await verifyTotp(db, sealer, pending.userId, request.body.code))) {
        const over = await failSecondFactor(kv, pending.id)
        if (over) return reply.redirect('/ui/login', 303)
        const lang = langOf(request)
        const form = codeForm(
          lang,
          '/ui/mfa',
          csrfToken(request, reply, secureCookies),
          html`<h1>${t(lang, 'Second factor')}</h1>`,
          t(lang, 'That code is not right, or was already used.'),
        )
        return sendLocalPage(reply, 401, 'Second factor', form)
      }
      await endSecondFactor(kv, reply, pending.id)
      return completeSignIn({ db, receipts }, request, reply, {
        userId: pending.userId,
        amr: ['pwd', 'otp'],
        acr: 'urn:svc:mfa',
        returnTo: pending.returnTo,
        secure: secureCookies,
      })
    },
  )

  app.post(
    '/ui/account/totp',
    {
      ...signedIn,
      schema: {
        summary: 'Start setting up an authenticator app',
        tags,
        body: CsrfOnly,
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const user = await userById(db, session.user_id)
      const { secret, uri } = await beginEnrolment(
        db,
        sealer,
        session.user_id,
        user?.email ?? session.user_id,
      )
      const lang = langOf(request)
      const intro = html`<h1>${t(lang, 'Set up an authenticator')}</h1>
        <p>${t(lang, 'Add this key to your authenticator app, then enter the code it shows.')}</p>
        <p><code data-secret>${secret}</code></p>
        <p><a href="${uri}" data-otpauth>${uri}</a></p>`
      return sendLocalPage(
        reply,
        200,
        'Authenticator',
        codeForm(lang, '/ui/account/totp/confirm', csrfToken(request, reply, secureCookies), intro),
      )
    },
  )

  app.post(
    '/ui/account/totp/confirm',
    { ...signedIn, schema: { summary: 'Confirm the authenticator with its first code', tags, body: Code } },
    async (request, reply) => {
      const session = sessionOf(request)
      if (!(await verifyTotp(db, sealer, session.user_id, request.body.code, true)))
        return sendLocalMessage(
          reply,
          400,
          'Authenticator',
          'That code is not right. Start again from your account page.',
        )
      await recordEvent(db, session.user_id, 'totp_enrolled', requestContext(request))
      return sendLocalMessage(
        reply,
        200,
        'Authenticator enabled',
        'Sign-in now asks for a code from your app.',
      )
    },
  )
}
