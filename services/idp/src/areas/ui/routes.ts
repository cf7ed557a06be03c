import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { type App, html, type Kv, KvUnavailable, rateLimit } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { AccountChangesService } from '../account-changes/index.ts'
import { beginSecondFactor } from '../mfa/index.ts'
import { hasTotp } from '../mfa/index.ts'
import { authenticate, recordEvent, requestContext } from '../accounts/index.ts'
import { PASSKEY_SCRIPT_PATH, passkeySignInForm } from '../passkeys/index.ts'
import { type RelyingParty, signInOptions } from '../passkeys/index.ts'
import { CsrfOnly, checkCsrf, csrfToken } from '../../pages/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { currentSession, endSession } from '../sessions/index.ts'
import { accountPage, type AccountPageDeps } from './account-page.ts'
import { langOf, type Phrase, rememberLang, t } from '../../pages/i18n.ts'
import {
  DESIGN_CSS_PATH,
  FAVICON_PATH,
  field,
  langField,
  LOCAL_TIME_SCRIPT,
  LOCAL_TIME_SCRIPT_PATH,
  SIGNED_OUT_SCRIPT,
  SIGNED_OUT_SCRIPT_PATH,
  appLinks,
  localPage,
  safeReturnTo,
  signedOut,
  signedOutCsp,
} from '../../pages/layout.ts'
import { designAssets, sendDesignAsset } from '@svc/kit/design/assets'
import { completeSignIn } from '../accounts/index.ts'
import { onwardOf, type OnwardApp } from '../clients/index.ts'

interface UiOptions extends AccountPageDeps {
  accountChanges: AccountChangesService
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
  request: FastifyRequest,
  csrf: string,
  returnTo: string,
  passkeyOptions: object | undefined,
  onward: OnwardApp | undefined,
  email = '',
  error?: Phrase,
) => {
  const lang = langOf(request)
  // registration and the password reset keep the flow: its application is linked on their pages too
  const flow = returnTo === '/ui/account' ? '' : `&return_to=${encodeURIComponent(returnTo)}`
  const [app] = appLinks(onward)
  return localPage(
    request,
    'Sign in',
    html`<h1>${t(lang, 'Sign in')}</h1>
      ${error ? html`<p class="svc-notice error" role="alert">${t(lang, error)}</p>` : ''}
      <form method="post" action="/ui/login">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="return_to" value="${returnTo}" />
        ${langField(lang)}
        ${field(lang, { id: 'email', label: 'Email', type: 'email', autocomplete: 'username', required: true, value: email })}
        ${field(lang, { id: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true })}
        <button type="submit" class="primary">${t(lang, 'Sign in')}</button>
      </form>
      ${
        passkeyOptions
          ? passkeySignInForm(lang, csrf, returnTo, passkeyOptions)
          : html`<p>${t(lang, 'Passkey sign-in is unavailable for a moment: sign in with your password.')}</p>`
      }
      <p class="svc-links">
        <a href="/ui/forgot?ui_locales=${lang}${flow}" data-link="forgot">${t(lang, 'Forgot your password?')}</a>
        <a href="/ui/register?ui_locales=${lang}${flow}" data-link="register">${t(lang, 'Create an account')}</a>
      </p>
      ${app ? html`<p class="svc-links"><a href="${app.href}" data-onward-app="${app.app}">${t(lang, app.text, app.vars)}</a></p>` : ''}`,
    [PASSKEY_SCRIPT_PATH],
  )
}

export function uiRoutes(app: App, options: UiOptions) {
  const { db, rp, receipts, kv, origin, secureCookies, onSessionEnd } = options
  const tags = ['pages']
  const pages = pageHooks({ db, origin })
  const design = designAssets()
  const VersionQuery = Type.Object({ v: Type.Optional(Type.String({ maxLength: 40 })) })
  app.get(
    DESIGN_CSS_PATH,
    {
      schema: {
        summary: 'The style sheet shared with the console (packages/kit design)',
        tags,
        querystring: VersionQuery,
      },
    },
    (request, reply) => sendDesignAsset(request, reply, design.css),
  )
  for (const path of [FAVICON_PATH, '/favicon.ico'])
    app.get(
      path,
      { schema: { summary: 'The favicon (SVG)', tags, querystring: VersionQuery } },
      (request, reply) => sendDesignAsset(request, reply, design.favicon),
    )
  for (const [path, script, summary] of [
    [LOCAL_TIME_SCRIPT_PATH, LOCAL_TIME_SCRIPT, 'Shows the pages’ times in the reader’s time zone'],
    [
      SIGNED_OUT_SCRIPT_PATH,
      SIGNED_OUT_SCRIPT,
      'Goes on from the signed-out page once the clients were told',
    ],
  ] as const)
    app.get(path, { schema: { summary, tags } }, (_, reply) =>
      reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=300')
        .send(script),
    )
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
        request,
        csrfToken(request, reply, secureCookies),
        returnTo,
        await passkeyOptionsIfAvailable(rp),
        await onwardOf(db, request),
        request.query.login_hint ?? '',
      )
      return reply.type('text/html; charset=utf-8').send(form)
    },
  )

  app.get(
    '/ui/lang',
    {
      schema: {
        summary: 'The hosted pages’ language switch: remembers the language (a cookie), then goes back',
        tags,
        querystring: Type.Object({
          lang: Type.Union([Type.Literal('en'), Type.Literal('ar')]),
          return_to: Type.Optional(Type.String({ maxLength: 4000 })),
        }),
      },
    },
    async (request, reply) => {
      rememberLang(reply, request.query.lang, secureCookies)
      return reply.redirect(safeReturnTo(request.query.return_to, '/ui/login'), 303)
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
          request,
          csrfToken(request, reply, secureCookies),
          returnTo,
          await passkeyOptionsIfAvailable(rp),
          await onwardOf(db, request),
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
      schema: { summary: 'The account page: who is signed in, where, and recent security activity', tags },
    },
    async (request, reply) => {
      const csrf = csrfToken(request, reply, secureCookies)
      return reply
        .type('text/html; charset=utf-8')
        .send(await accountPage(options, request, sessionOf(request), csrf))
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
      const data = await options.accountChanges.exportOf(session.user_id)
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
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', signedOutCsp(frames))
        .send(signedOut(request, frames, '/ui/login'))
    },
  )
}
