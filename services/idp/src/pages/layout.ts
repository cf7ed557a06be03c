import { type Html, html, PAGE_CSP } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { formatRelative, formatWhen, type Lang, langOf, type Phrase, t } from './i18n.ts'

/** The hosted pages' one style sheet, served at `PAGE_STYLE_PATH` (no inline style: the pages' CSP has none). */
export const PAGE_STYLE_PATH = '/ui/page.css'
export const PAGE_STYLE = `body {
  font: 16px/1.5 system-ui, sans-serif;
  max-width: 28rem;
  margin: 3rem auto;
  padding: 0 1rem;
}
label {
  display: block;
  margin: 0.75rem 0 0.25rem;
}
input {
  width: 100%;
  padding: 0.5rem;
  box-sizing: border-box;
}
input[type='checkbox'],
input[type='radio'] {
  width: auto;
}
button {
  margin-top: 1rem;
  padding: 0.5rem 1rem;
}
nav {
  text-align: end;
}
.error {
  color: #a00;
}
table {
  border-collapse: collapse;
  width: 100%;
  font-size: 0.9em;
}
td {
  border-top: 1px solid #ddd;
  padding: 0.25rem;
}
`

/** The other language's link: the switch remembers the choice, then comes back to this page. */
function languageSwitch(lang: Lang, returnTo: string) {
  const other: Lang = lang === 'ar' ? 'en' : 'ar'
  const href = `/ui/lang?${new URLSearchParams({ lang: other, return_to: returnTo })}`
  return html`<nav aria-label="${t(lang, 'Language')}">
    <a href="${href}" lang="${other}" hreflang="${other}" data-lang-switch="${other}"
      >${other === 'ar' ? 'العربية' : 'English'}</a
    >
  </nav>`
}

/** Keeps a form's answer in the page's language (read back as `ui_locales` by `langOf`). */
export const langField = (lang: Lang) => html`<input type="hidden" name="ui_locales" value="${lang}" />`

/** A page in English only (the pages not yet translated; no language switch). */
export function page(title: string, body: Html, scripts: string[] = []): string {
  return document('en', title, body, scripts)
}

/**
 * A hosted page in the request's language (./i18n.ts, `langOf`), right to left in Arabic, with the
 * switch to the other language. `title` is a phrase, or text already in the page's language.
 */
export function localPage(
  request: FastifyRequest,
  title: Phrase | string,
  body: Html,
  scripts: string[] = [],
) {
  const lang = langOf(request)
  // a form's answer has no address to come back to: the switch goes to the account (or sign-in)
  const returnTo = request.method === 'GET' ? safeReturnTo(request.url) : '/ui/account'
  return document(lang, t(lang, title as Phrase), body, scripts, languageSwitch(lang, returnTo))
}

function document(lang: Lang, title: string, body: Html, scripts: string[], nav: Html | string = '') {
  return html`<!doctype html>
    <html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · svc</title>
        <link rel="stylesheet" href="${PAGE_STYLE_PATH}" />
        ${scripts.map((src) => html`<script src="${src}" defer></script>`)}
      </head>
      <body>
        ${nav}
        <main>${body}</main>
      </body>
    </html>`.value
}

/** Where to go after a form: a path on this site only, never another origin (no open redirect). */
export function safeReturnTo(value: string | undefined, fallback = '/ui/account'): string {
  if (!value || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return fallback
  return value
}

/**
 * The signed-out page's policy: the kit's page policy, with the front-channel logout URIs' origins
 * as the frames it may load (OpenID Connect Front-Channel Logout 1.0); never framed itself.
 */
export function signedOutCsp(frames: string[]): string {
  const origins = [...new Set(frames.map((src) => new URL(src).origin))]
  return `${PAGE_CSP}; frame-src ${origins.length ? origins.join(' ') : "'none'"}`
}

/** The signed-out page: hidden front-channel frames, then the post-logout redirect about two seconds later. */
export function signedOut(request: FastifyRequest, frames: string[], redirect?: string) {
  const lang = langOf(request)
  return localPage(
    request,
    'Signed out',
    html`${redirect ? html`<meta http-equiv="refresh" content="2;url=${redirect}" />` : ''}
      <h1>${t(lang, 'You are signed out')}</h1>
      ${frames.map((src) => html`<iframe src="${src}" hidden title="sign-out"></iframe>`)}
      ${redirect ? html`<p>${t(lang, 'Returning to the application…')}</p>` : html`<p><a href="/ui/login">${t(lang, 'Sign in')}</a></p>`}`,
  )
}

/** Answers with an English page: the status, the title, and a body already made safe by `html`. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: Html): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page(title, body))
}

/** An English page that is only a heading and a sentence. */
export const sendMessage = (reply: FastifyReply, status: number, title: string, text: string) =>
  sendPage(reply, status, title, html`<h1>${title}</h1><p>${text}</p>`)

/** Answers with a page in the request's language. */
export function sendLocalPage(reply: FastifyReply, status: number, title: Phrase, body: Html): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(localPage(reply.request, title, body))
}

/** A heading and a sentence, both phrases, in the request's language (`vars` fill the sentence's slots). */
export function sendLocalMessage(
  reply: FastifyReply,
  status: number,
  title: Phrase,
  text: Phrase,
  vars: Record<string, string | number> = {},
): FastifyReply {
  const lang = langOf(reply.request)
  return sendLocalPage(reply, status, title, html`<h1>${t(lang, title)}</h1><p>${t(lang, text, vars)}</p>`)
}

/** A moment as the account page shows it: "5 minutes ago", with the full date and time beside it. */
export const when = (lang: Lang, at: Date) =>
  html`<time datetime="${at.toISOString()}" title="${formatWhen(lang, at)}"
    >${formatRelative(lang, at)} (${formatWhen(lang, at)})</time
  >`
