import type { FastifyReply, FastifyRequest } from 'fastify'
import { type App, html, type Kv, rateLimit, type Sealer } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import type { Mailer } from '../email/mailer.ts'
import { consumeEmailToken, issueEmailToken, outbox } from '../email/index.ts'
import { checkCsrf, csrfToken } from '../../pages/csrf.ts'
import { langOf, t } from '../../pages/i18n.ts'
import { appLinks, field, langField, localPage, page, sendLocalMessage, when } from '../../pages/layout.ts'
import { onwardOf } from '../clients/index.ts'
import { type ChangeDeps, changePassword } from './changes.ts'
import { createUser, recordEvent } from '../accounts/index.ts'
import { markEmailVerified, userByEmail } from '../accounts/index.ts'

import {
  backToSignIn,
  clientParam,
  emailForm,
  flowOf,
  MIN_PASSWORD,
  type RegisterError,
  registerForm,
  sendAgain,
  withLinks,
} from './flow-pages.ts'

export { MIN_PASSWORD }
const VERIFY_TTL_MS = 24 * 3600_000
const RESET_TTL_MS = 3600_000
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]{2,}$/

interface AccountOptions {
  db: IdpDb
  mailer: Mailer
  sealer: Sealer
  kv: Kv
  issuer: string
  origin: string
  secureCookies: boolean
  development: boolean
  ratePerMinute: number
  changes: ChangeDeps
}

export function accountRoutes(
  app: App,
  {
    db,
    mailer,
    sealer,
    kv,
    issuer,
    origin,
    secureCookies,
    development,
    ratePerMinute,
    changes,
  }: AccountOptions,
) {
  const tags = ['pages']
  type Onward = Awaited<ReturnType<typeof onwardOf>>

  /** A confirmation link for `to`, kept for 24 hours, naming the flow's client when there is one. */
  const sendVerifyLink = async (trx: IdpDb, userId: string, to: string, onward: Onward) => {
    const token = await issueEmailToken(trx, userId, 'verify_email', VERIFY_TTL_MS)
    await mailer.send(trx, {
      to,
      subject: 'Confirm your email address',
      text: `Confirm your address: ${issuer}/ui/verify-email?token=${token}${clientParam(onward)}\nThe link works once, for 24 hours.`,
    })
  }

  /** The same page after a registration and after asking again (it says nothing of the account). */
  const checkYourEmail = (request: FastifyRequest, reply: FastifyReply, email: string, onward: Onward) => {
    const lang = langOf(request)
    const flow = flowOf(request)
    return sendLocalMessage(
      reply,
      200,
      'Check your email',
      'We sent a message to {email}. Follow its link to confirm your address.',
      { email },
      backToSignIn(lang, flow, onward),
      sendAgain(lang, csrfToken(request, reply, secureCookies), '/ui/register/resend', email, flow),
    )
  }

  const ReturnTo = Type.Optional(Type.String({ maxLength: 4000 }))
  const ClientId = Type.Optional(Type.String({ maxLength: 200 }))

  app.get(
    '/ui/register',
    {
      schema: {
        summary: 'The registration page (return_to: the sign-in it started from, whose application it links)',
        tags,
        querystring: Type.Object({ return_to: ReturnTo }),
      },
    },
    async (request, reply) =>
      reply
        .type('text/html; charset=utf-8')
        .send(registerForm(request, csrfToken(request, reply, secureCookies), await onwardOf(db, request))),
  )

  app.post(
    '/ui/register',
    {
      preHandler: rateLimit(kv, 'register', { limit: ratePerMinute, windowMs: 60_000 }),
      schema: {
        summary: 'Create an account; the address is confirmed by a link sent to it',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          email: Type.String({ maxLength: 320 }),
          password: Type.String({ maxLength: 1000 }),
          name: Type.Optional(Type.String({ maxLength: 200 })),
          return_to: ReturnTo,
        }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const { email, password } = request.body
      const name = request.body.name?.trim() || undefined
      const onward = await onwardOf(db, request)
      const refuse = (error: RegisterError) =>
        reply
          .code(400)
          .type('text/html; charset=utf-8')
          .send(
            registerForm(request, csrfToken(request, reply, secureCookies), onward, { email, name }, error),
          )
      if (!EMAIL.test(email)) return refuse({ field: 'email', phrase: 'Enter a valid email address.' })
      if (password.length < MIN_PASSWORD)
        return refuse({ field: 'password', phrase: 'Choose a password of at least {n} characters.' })
      // the same answer whether or not the address has an account: its owner is told by email instead
      await db.transaction().execute(async (trx) => {
        if (await userByEmail(trx, email)) {
          await mailer.send(trx, {
            to: email,
            subject: 'You already have an account',
            text: `Someone tried to create an account with this address, which already has one. Sign in at ${issuer}/ui/login. If it was not you, nothing changed.`,
          })
          return
        }
        const userId = await createUser(trx, sealer, { email, password, ...(name ? { name } : {}) })
        await sendVerifyLink(trx, userId, email, onward)
        await recordEvent(trx, userId, 'register', { ip: request.ip })
      })
      return checkYourEmail(request, reply, email, onward)
    },
  )

  app.get(
    '/ui/verify-email',
    {
      schema: {
        summary: 'Confirm an email address from its link',
        tags,
        querystring: Type.Object({ token: Type.String({ maxLength: 100 }), client_id: ClientId }),
      },
    },
    async (request, reply) => {
      const onward = await onwardOf(db, request)
      const userId = await consumeEmailToken(db, request.query.token, 'verify_email')
      if (!userId)
        return sendLocalMessage(
          reply,
          400,
          'Link not valid',
          'This link has expired or was already used.',
          {},
          [{ href: '/ui/login', text: 'Back to sign in' }, ...appLinks(onward)],
        )
      await markEmailVerified(db, userId)
      await recordEvent(db, userId, 'email_verified', { ip: request.ip })
      return sendLocalMessage(
        reply,
        200,
        'Email confirmed',
        'Your address is confirmed. You can sign in.',
        {},
        [{ href: '/ui/account', text: 'Sign in' }, ...appLinks(onward)],
      )
    },
  )

  app.post(
    '/ui/register/resend',
    {
      preHandler: rateLimit(kv, 'register', { limit: ratePerMinute, windowMs: 60_000 }),
      schema: {
        summary:
          'Send the confirmation link again; the answer is the same whether or not the address has an account',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          email: Type.String({ maxLength: 320 }),
          return_to: ReturnTo,
        }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const onward = await onwardOf(db, request)
      const email = request.body.email.trim()
      const user = EMAIL.test(email) ? await userByEmail(db, email) : undefined
      // only an address not yet confirmed gets a new link; any other gets nothing, and the same page
      if (user && !user.email_verified_at)
        await db.transaction().execute(async (trx) => {
          await sendVerifyLink(trx, user.id, user.email, onward)
        })
      return checkYourEmail(request, reply, email, onward)
    },
  )

  if (development)
    app.get(
      '/ui/dev/outbox',
      { schema: { summary: 'Development only: the emails sent', tags } },
      async (_request, reply) => {
        const emails = await outbox(db)
        return reply.type('text/html; charset=utf-8').send(
          page(
            'Outbox',
            html`<h1>Outbox (development)</h1>
              ${emails.length === 0 ? html`<p>No message was sent yet.</p>` : ''}
              ${emails.map(
                (e) =>
                  html`<article class="svc-card">
                    <h2>${e.subject}</h2>
                    <p class="svc-hint">To ${e.recipient}, ${when('en', e.created_at)}</p>
                    <pre>${withLinks(e.body)}</pre>
                  </article>`,
              )}`,
            [],
            'wide',
          ),
        )
      },
    )

  app.get(
    '/ui/forgot',
    {
      schema: {
        summary: 'Ask for a password reset link (return_to: the sign-in it started from)',
        tags,
        querystring: Type.Object({ return_to: ReturnTo }),
      },
    },
    async (request, reply) => {
      const csrf = csrfToken(request, reply, secureCookies)
      const form = emailForm(langOf(request), csrf, flowOf(request), await onwardOf(db, request))
      return reply.type('text/html; charset=utf-8').send(localPage(request, 'Forgot your password', form))
    },
  )

  app.post(
    '/ui/forgot',
    {
      preHandler: rateLimit(kv, 'forgot', { limit: ratePerMinute, windowMs: 60_000 }),
      schema: {
        summary: 'Mail a reset link; the answer is the same whether or not the address has an account',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          email: Type.String({ maxLength: 320 }),
          return_to: ReturnTo,
        }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const onward = await onwardOf(db, request)
      const user = await userByEmail(db, request.body.email)
      if (user)
        await db.transaction().execute(async (trx) => {
          const token = await issueEmailToken(trx, user.id, 'reset_password', RESET_TTL_MS)
          await mailer.send(trx, {
            to: user.email,
            subject: 'Reset your password',
            text: `Choose a new password: ${issuer}/ui/reset?token=${token}${clientParam(onward)}\nThe link works once, for one hour. If you did not ask, ignore this message.`,
          })
        })
      const lang = langOf(request)
      return sendLocalMessage(
        reply,
        200,
        'Check your email',
        'If an account uses this address, a reset link is on its way.',
        {},
        backToSignIn(lang, flowOf(request), onward),
        sendAgain(
          lang,
          csrfToken(request, reply, secureCookies),
          '/ui/forgot',
          request.body.email,
          flowOf(request),
        ),
      )
    },
  )

  app.get(
    '/ui/reset',
    {
      schema: {
        summary: 'Choose a new password',
        tags,
        querystring: Type.Object({ token: Type.String({ maxLength: 100 }), client_id: ClientId }),
      },
    },
    async (request, reply) => {
      const lang = langOf(request)
      const clientId = request.query.client_id
      return reply.type('text/html; charset=utf-8').send(
        localPage(
          request,
          'Choose a new password',
          html`<h1>${t(lang, 'Choose a new password')}</h1>
            <form method="post" action="/ui/reset">
              <input type="hidden" name="csrf" value="${csrfToken(request, reply, secureCookies)}" />
              <input type="hidden" name="token" value="${request.query.token}" />
              ${clientId ? html`<input type="hidden" name="client_id" value="${clientId}" />` : ''}
              ${langField(lang)}
              ${field(lang, { id: 'password', label: 'New password (at least {n} characters)', labelVars: { n: MIN_PASSWORD }, type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD })}
              <button type="submit" class="primary">${t(lang, 'Change password')}</button>
            </form>`,
        ),
      )
    },
  )

  app.post(
    '/ui/reset',
    {
      schema: {
        summary: 'Set the new password; every session of the account ends',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          token: Type.String({ maxLength: 100 }),
          password: Type.String({ maxLength: 1000 }),
          client_id: ClientId,
        }),
      },
    },
    async (request, reply) => {
      checkCsrf(request, request.body.csrf, origin)
      const onward = await onwardOf(db, request)
      if (request.body.password.length < MIN_PASSWORD)
        return sendLocalMessage(
          reply,
          400,
          'Password too short',
          'Choose a password of at least {n} characters.',
          { n: MIN_PASSWORD },
          [
            {
              href: `/ui/reset?token=${encodeURIComponent(request.body.token)}${clientParam(onward)}`,
              text: 'Try again',
            },
          ],
        )
      const userId = await consumeEmailToken(db, request.body.token, 'reset_password')
      if (!userId)
        return sendLocalMessage(
          reply,
          400,
          'Link not valid',
          'This link has expired or was already used.',
          {},
          [{ href: '/ui/forgot', text: 'Ask for a new link' }, ...appLinks(onward)],
        )
      // whoever knew the old password is signed out everywhere, and the clients are told
      await changePassword(changes, userId, request.body.password, 'reset', { ip: request.ip })
      return sendLocalMessage(
        reply,
        200,
        'Password changed',
        'Your password is changed and every session is signed out. Sign in again.',
        {},
        [{ href: `/ui/login?ui_locales=${langOf(request)}`, text: 'Sign in' }, ...appLinks(onward)],
      )
    },
  )
}
