import { html } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { type Lang, langOf, type Phrase, t } from '../../pages/i18n.ts'
import { appLinks, field, langField, localPage, type Onward, safeReturnTo } from '../../pages/layout.ts'
import type { OnwardApp } from '../clients/index.ts'

/**
 * The pages of registration and the password reset (./routes.ts): their forms, and the flow they
 * keep (the authorization request's `return_to`, the application the emails' links name).
 */

/** NIST SP 800-63B: length, not composition rules. */
export const MIN_PASSWORD = 10

/** Which field a registration error belongs to: it is shown under that field, in words. */
export type RegisterError = { field: 'email' | 'password'; phrase: Phrase }

/**
 * The authorization request a page's flow returns to (`return_to`, this site only), kept through
 * registration and the password reset so their pages lead back to its application.
 */
export function flowOf(request: FastifyRequest): string | undefined {
  const fields = { ...(request.query as object), ...(request.body as object | undefined) } as {
    return_to?: unknown
  }
  const returnTo = typeof fields.return_to === 'string' ? safeReturnTo(fields.return_to, '') : ''
  return returnTo || undefined
}

/** A form's hidden `return_to`, when the page is part of a flow. */
export const flowField = (returnTo: string | undefined) =>
  returnTo ? html`<input type="hidden" name="return_to" value="${returnTo}" />` : ''

/** The emails' links carry the application (its client_id, public), not the whole flow. */
export const clientParam = (onward: OnwardApp | undefined) =>
  onward?.sent ? `&client_id=${encodeURIComponent(onward.app.client_id)}` : ''

export const registerForm = (
  request: FastifyRequest,
  csrf: string,
  onward: OnwardApp | undefined,
  values: { email?: string; name?: string } = {},
  error?: RegisterError,
) => {
  const lang = langOf(request)
  const returnTo = flowOf(request)
  const [app] = appLinks(onward)
  const errorOf = (name: RegisterError['field']) => (error?.field === name ? error.phrase : undefined)
  return localPage(
    request,
    'Create an account',
    html`<h1>${t(lang, 'Create an account')}</h1>
      <form method="post" action="/ui/register">
        <input type="hidden" name="csrf" value="${csrf}" />
        ${langField(lang)} ${flowField(returnTo)}
        ${field(lang, { id: 'name', label: 'Name', autocomplete: 'name', value: values.name ?? '' })}
        ${field(lang, { id: 'email', label: 'Email', type: 'email', autocomplete: 'email', required: true, value: values.email ?? '', error: errorOf('email') })}
        ${field(lang, { id: 'password', label: 'Password (at least {n} characters)', labelVars: { n: MIN_PASSWORD }, type: 'password', autocomplete: 'new-password', required: true, minlength: MIN_PASSWORD, error: errorOf('password'), errorVars: { n: MIN_PASSWORD } })}
        <button type="submit" class="primary">${t(lang, 'Create account')}</button>
      </form>
      <p class="svc-links">
        <a href="${signInHref(lang, returnTo)}">${t(lang, 'I already have an account: sign in')}</a>
        ${app ? html`<a href="${app.href}" data-onward-app="${app.app}">${t(lang, app.text, app.vars)}</a>` : ''}
      </p>`,
  )
}

/** The sign-in page, in the page's language, going on with the flow when there is one. */
export const signInHref = (lang: Lang, returnTo?: string) =>
  `/ui/login?ui_locales=${lang}${returnTo ? `&return_to=${encodeURIComponent(returnTo)}` : ''}`

export const emailForm = (
  lang: Lang,
  csrf: string,
  returnTo: string | undefined,
  onward: OnwardApp | undefined,
) =>
  html`<h1>${t(lang, 'Forgot your password')}</h1>
    <p>${t(lang, 'Enter your address: if it has an account, we send it a link to choose a new password.')}</p>
    <form method="post" action="/ui/forgot">
      <input type="hidden" name="csrf" value="${csrf}" />
      ${langField(lang)} ${flowField(returnTo)}
      ${field(lang, { id: 'email', label: 'Email', type: 'email', autocomplete: 'email', required: true })}
      <button type="submit" class="primary">${t(lang, 'Send a reset link')}</button>
    </form>
    <p class="svc-links">
      <a href="${signInHref(lang, returnTo)}">${t(lang, 'Back to sign in')}</a>
      ${appLinks(onward).map((app) => html`<a href="${app.href}" data-onward-app="${app.app}">${t(lang, app.text, app.vars)}</a>`)}
    </p>`

/** "Check your email" leads on: send the message again (the same form, the address kept), or back to sign in. */
export const sendAgain = (
  lang: Lang,
  csrf: string,
  action: string,
  email: string,
  returnTo: string | undefined,
) =>
  html`<form method="post" action="${action}" class="svc-actions" data-resend>
    <input type="hidden" name="csrf" value="${csrf}" />
    <input type="hidden" name="email" value="${email}" />
    ${langField(lang)} ${flowField(returnTo)}
    <span class="svc-hint">${t(lang, 'No message after a few minutes? Check your spam folder, or')}</span>
    <button type="submit">${t(lang, 'Send it again')}</button>
  </form>`

/** An end page of the flow: back to sign in (going on with it), and to its application (or svc's console). */
export const backToSignIn = (
  lang: Lang,
  returnTo: string | undefined,
  onward: OnwardApp | undefined,
): Onward[] => [{ href: signInHref(lang, returnTo), text: 'Back to sign in' }, ...appLinks(onward)]

/** A development outbox's message: its text with every link made a link. */
export const withLinks = (text: string) =>
  text.split(/(https?:\/\/[^\s<>"]+)/g).map((part, i) => (i % 2 ? html`<a href="${part}">${part}</a>` : part))
