import { type App, AppError, html, type Kv, rateLimit } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { requestContext } from '../accounts/index.ts'
import { describeScope } from '../authorize/index.ts'
import { csrfToken } from '../../pages/csrf.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import type { Session } from '../sessions/index.ts'
import { langOf, type Phrase, t } from '../../pages/i18n.ts'
import { appLinks, field, langField, sendLocalMessage, sendLocalPage } from '../../pages/layout.ts'
import { onwardOf } from '../clients/index.ts'
import { answerDevice, type DeviceDeps, type PendingRequest, pendingRequest } from './service.ts'
import { displayUserCode } from './user-code.ts'

export interface PageDeps extends DeviceDeps {
  kv: Kv
  origin: string
  secureCookies: boolean
  /** RFC 8628 §5.1: user codes are short, so an account may look up only a few a minute; 0: no limit. */
  userCodesPerMinute: number
}

function codeForm(reply: FastifyReply, status: number, typed = '', error?: Phrase) {
  const lang = langOf(reply.request)
  return sendLocalPage(
    reply,
    status,
    'Connect a device',
    html`<h1>${t(lang, 'Connect a device')}</h1>
      <form method="get" action="/device">
        ${field(lang, { id: 'user_code', label: 'The code your device shows', autocomplete: 'off', required: true, value: typed, error })}
        <button type="submit" class="primary">${t(lang, 'Continue')}</button>
      </form>`,
  )
}

function confirmation(reply: FastifyReply, csrf: string, request: PendingRequest) {
  const code = displayUserCode(request.user_code)
  const lang = langOf(reply.request)
  const client = request.client_name
  return sendLocalPage(
    reply,
    200,
    'Connect a device',
    html`<h1>${t(lang, 'Connect {client}?', { client })}</h1>
      <p>${t(lang, 'Continue only if your device shows the code')} <strong dir="ltr">${code}</strong>.</p>
      <p>${t(lang, '{client} asks to:', { client })}</p>
      <ul>
        ${request.scope.map((scope) => html`<li>${describeScope(lang, scope)}</li>`)}
      </ul>
      <form method="post" action="/device">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="user_code" value="${code}" />
        ${langField(lang)}
        <div class="svc-actions">
          <button type="submit" name="decision" value="approve" class="primary">${t(lang, 'Allow')}</button>
          <button type="submit" name="decision" value="deny">${t(lang, 'Deny')}</button>
        </div>
      </form>`,
  )
}

const WRONG_CODE: Phrase = 'This code is wrong, expired or already used. Check the code on your device.'
const TOO_MANY: Phrase = 'Too many codes were tried: wait a minute, then try again.'

/** The user's side (RFC 8628 §3.3): sign in, enter or confirm the code, allow or deny. */
export function devicePages(app: App, deps: PageDeps) {
  const tags = ['pages']
  const pages = pageHooks(deps)
  /** Sign in, then back to the code the user typed, if any. */
  const signInFirst = (typed: unknown) => {
    const back =
      typeof typed === 'string' && typed ? `/device?${new URLSearchParams({ user_code: typed })}` : '/device'
    return `/ui/login?${new URLSearchParams({ return_to: back })}`
  }
  /** The request a typed code names; 'throttled' once the account has looked up too many codes this minute. */
  const lookUp = async (request: FastifyRequest, reply: FastifyReply, session: Session, typed: string) => {
    const limit = { limit: deps.userCodesPerMinute, windowMs: 60_000, key: () => session.user_id }
    try {
      await rateLimit(deps.kv, 'user-code', limit)(request, reply)
    } catch (err) {
      if (err instanceof AppError && err.status === 429) {
        reply.headers(err.headers)
        return 'throttled'
      }
      throw err
    }
    return pendingRequest(deps, typed)
  }

  app.get(
    '/device',
    {
      ...pages.signedIn((request) => signInFirst((request.query as { user_code?: unknown }).user_code)),
      schema: {
        summary: 'The page where a user enters or confirms the code a device shows',
        tags,
        querystring: Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 40 })) }),
      },
    },
    async (request, reply) => {
      const typed = request.query.user_code
      const session = sessionOf(request)
      if (!typed) return codeForm(reply, 200)
      const pending = await lookUp(request, reply, session, typed)
      if (pending === 'throttled') return codeForm(reply, 429, typed, TOO_MANY)
      if (!pending) return codeForm(reply, 400, typed, WRONG_CODE)
      return confirmation(reply, csrfToken(request, reply, deps.secureCookies), pending)
    },
  )

  app.post(
    '/device',
    {
      ...pages.formSigningInWithBody((request) =>
        signInFirst((request.body as { user_code?: unknown } | undefined)?.user_code),
      ),
      schema: {
        summary: 'Allow or deny the device that shows this code',
        tags,
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          user_code: Type.String({ maxLength: 40 }),
          decision: Type.Union([Type.Literal('approve'), Type.Literal('deny')]),
        }),
      },
    },
    async (request, reply) => {
      const typed = request.body.user_code
      const session = sessionOf(request)
      const pending = await lookUp(request, reply, session, typed)
      if (pending === 'throttled') return codeForm(reply, 429, typed, TOO_MANY)
      if (!pending) return codeForm(reply, 400, typed, WRONG_CODE)
      const approve = request.body.decision === 'approve'
      if (!(await answerDevice(deps, pending, session, approve, requestContext(request))))
        return codeForm(reply, 400, typed, WRONG_CODE)
      const client = pending.client_name
      // the device's application on the web when it has a home there, else svc's console; then the account
      const links = [
        ...appLinks(await onwardOf(deps.db, request, pending.client_id)),
        { href: '/ui/account', text: 'Back to your account' } as const,
      ]
      return approve
        ? sendLocalMessage(
            reply,
            200,
            'Device connected',
            '{client} is connected: return to your device.',
            { client },
            links,
          )
        : sendLocalMessage(
            reply,
            200,
            'Device not connected',
            '{client} was refused access.',
            { client },
            links,
          )
    },
  )
}
