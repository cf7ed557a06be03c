import { type Html, html, PAGE_CSP } from '@svc/kit'
import { designAssets, PRODUCT_NAME } from '@svc/kit/design/assets'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { OnwardApp } from '../areas/clients/index.ts'
import { formatRelative, formatWhen, type Lang, langOf, type Phrase, t } from './i18n.ts'

/** Where the idp serves the shared style sheet and the favicon (packages/kit/src/design). */
export const DESIGN_CSS_PATH = '/ui/design.css'
export const FAVICON_PATH = '/favicon.svg'
/** The script that shows every `<time>` in the reader's own time zone and language. */
export const LOCAL_TIME_SCRIPT_PATH = '/ui/local-time.js'

/** The other language's link: the switch remembers the choice, then comes back to this page. */
function languageSwitch(lang: Lang, returnTo: string) {
  const other: Lang = lang === 'ar' ? 'en' : 'ar'
  const href = `/ui/lang?${new URLSearchParams({ lang: other, return_to: returnTo })}`
  return html`<nav aria-label="${t(lang, 'Language')}">
    <a href="${href}" lang="${other}" hreflang="${other}" data-lang-switch="${other}" class="svc-button"
      >${other === 'ar' ? 'العربية' : 'English'}</a
    >
  </nav>`
}

/** Keeps a form's answer in the page's language (read back as `ui_locales` by `langOf`). */
export const langField = (lang: Lang) => html`<input type="hidden" name="ui_locales" value="${lang}" />`

/** A page in English only (the pages not yet translated; no language switch). */
export function page(title: string, body: Html, scripts: string[] = [], width: PageWidth = 'narrow'): string {
  return document('en', title, body, scripts, '', width)
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
  width: PageWidth = 'narrow',
) {
  const lang = langOf(request)
  // a form's answer has no address to come back to: the switch goes to the account (or sign-in)
  const returnTo = request.method === 'GET' ? safeReturnTo(request.url) : '/ui/account'
  return document(lang, t(lang, title as Phrase), body, scripts, languageSwitch(lang, returnTo), width)
}

/** How wide a page's card is: `narrow` for a form, `wide` for the account and lists. */
export type PageWidth = 'narrow' | 'wide'

function document(
  lang: Lang,
  title: string,
  body: Html,
  scripts: string[],
  nav: Html | string = '',
  width: PageWidth = 'narrow',
) {
  const { css, favicon } = designAssets()
  return html`<!doctype html>
    <html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title} · ${PRODUCT_NAME}</title>
        <link rel="icon" type="image/svg+xml" href="${FAVICON_PATH}?v=${favicon.version}" />
        <link rel="stylesheet" href="${DESIGN_CSS_PATH}?v=${css.version}" />
        ${[LOCAL_TIME_SCRIPT_PATH, ...scripts].map((src) => html`<script src="${src}" defer></script>`)}
      </head>
      <body>
        <header class="svc-top">
          <a class="svc-brand" href="/ui/account"
            ><img src="${FAVICON_PATH}?v=${favicon.version}" alt="" width="24" height="24" />${PRODUCT_NAME}</a
          >
          ${nav}
        </header>
        <main class="svc-main${width === 'wide' ? ' wide' : ''}">
          ${width === 'wide' ? body : html`<div class="svc-card">${body}</div>`}
        </main>
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

/** Where an end page leads on: a link in the page's language, the first one the main way. */
export interface Onward {
  href: string
  text: Phrase
  vars?: Record<string, string | number>
  /** The link leads to this client (its id, for the tests and the script). */
  app?: string
}

/**
 * The way back to an application (`onwardOf`, clients/home.ts): "Back to {app}" when it sent the
 * person, "Go to {app}" for svc's console; none when neither is known. `href` replaces its home
 * (a post-logout redirect URI the client asked for).
 */
export const appLinks = (onward: OnwardApp | undefined, href?: string): Onward[] =>
  onward
    ? [
        {
          href: href ?? onward.app.href,
          text: onward.sent ? 'Back to {app}' : 'Go to {app}',
          vars: { app: onward.app.name },
          app: onward.app.client_id,
        },
      ]
    : []

/** The links (or, with `form`, the buttons) after an end page's sentence: never a dead end. */
export const onwardLinks = (lang: Lang, links: Onward[]) =>
  html`<p class="svc-links" data-onward>
    ${links.map(
      (link, i) =>
        html`<a
          href="${link.href}"
          class="svc-button${i === 0 ? ' primary' : ''}"
          data-onward-link
          ${link.app ? html`data-onward-app="${link.app}"` : ''}
          >${t(lang, link.text, link.vars)}</a
        >`,
    )}
  </p>`

/** The signed-out page's script: on to the application once the frames loaded (two seconds at most). */
export const SIGNED_OUT_SCRIPT_PATH = '/ui/signed-out.js'
export const SIGNED_OUT_SCRIPT = `(() => {
  const back = document.querySelector('[data-onward-link]')
  if (!back) return
  const frames = [...document.querySelectorAll('iframe')]
  let waiting = frames.length
  const go = () => location.replace(back.href)
  // every client's frame told, or two seconds, whichever comes first; a visible link stays meanwhile
  const timer = setTimeout(go, 2000)
  const done = () => { if (--waiting <= 0) { clearTimeout(timer); setTimeout(go, 300) } }
  if (waiting === 0) done()
  for (const frame of frames) frame.addEventListener('load', done, { once: true })
})()
`

/**
 * The signed-out page: hidden front-channel frames, then on to the application (a script, once
 * the frames loaded; no meta refresh, which a person cannot stop), with a link meanwhile. Without
 * a redirect, it stays and leads to the application (`onward`: the client, else the console) or
 * to sign in again.
 */
export function signedOut(request: FastifyRequest, frames: string[], redirect?: string, onward?: OnwardApp) {
  const lang = langOf(request)
  const signIn: Onward = { href: `/ui/login?ui_locales=${lang}`, text: 'Sign in again' }
  const back: Onward[] = redirect
    ? onward?.sent
      ? appLinks(onward, redirect)
      : [{ href: redirect, text: 'Back to the application' }]
    : []
  const links = redirect
    ? [...back, signIn]
    : onward?.sent
      ? [...appLinks(onward), signIn]
      : [signIn, ...appLinks(onward)]
  return localPage(
    request,
    'Signed out',
    html`<h1>${t(lang, 'You are signed out')}</h1>
      ${frames.map((src) => html`<iframe src="${src}" hidden title="sign-out"></iframe>`)}
      ${redirect ? html`<p role="status">${t(lang, 'Returning to the application…')}</p>` : ''}
      ${onwardLinks(lang, links)}`,
    redirect ? [SIGNED_OUT_SCRIPT_PATH] : [],
  )
}

/** Answers with an English page: the status, the title, and a body already made safe by `html`. */
export function sendPage(reply: FastifyReply, status: number, title: string, body: Html): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page(title, body))
}

/** An English page that is only a heading, a sentence and the way back to the account. */
export const sendMessage = (reply: FastifyReply, status: number, title: string, text: string) =>
  sendPage(
    reply,
    status,
    title,
    html`<h1>${title}</h1>
      <p>${text}</p>
      ${onwardLinks('en', [{ href: '/ui/account', text: 'Back to your account' }])}`,
  )

/** Answers with a page in the request's language. */
export function sendLocalPage(
  reply: FastifyReply,
  status: number,
  title: Phrase,
  body: Html,
  width: PageWidth = 'narrow',
): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .send(localPage(reply.request, title, body, [], width))
}

/** Where an end page leads when it names nothing else: the account (sign-in first when signed out). */
const TO_ACCOUNT: Onward[] = [{ href: '/ui/account', text: 'Back to your account' }]

/**
 * A heading, a sentence and where to go next, in the request's language (`vars` fill the
 * sentence's slots; `links` default to the account, `extra` comes after them, e.g. a resend form).
 */
export function sendLocalMessage(
  reply: FastifyReply,
  status: number,
  title: Phrase,
  text: Phrase,
  vars: Record<string, string | number> = {},
  links: Onward[] = TO_ACCOUNT,
  extra: Html | string = '',
): FastifyReply {
  const lang = langOf(reply.request)
  const tone = status >= 400 ? ' error' : ''
  return sendLocalPage(
    reply,
    status,
    title,
    html`<h1>${t(lang, title)}</h1>
      <p class="svc-notice${tone}" ${status >= 400 ? html`role="alert"` : ''}>${t(lang, text, vars)}</p>
      ${extra} ${onwardLinks(lang, links)}`,
  )
}

/** A labelled field: the label above, a hint, then the field, its error in words below it. */
export function field(
  lang: Lang,
  spec: {
    id: string
    name?: string
    label: Phrase
    labelVars?: Record<string, string | number>
    type?: string
    autocomplete?: string
    required?: boolean
    value?: string
    minlength?: number
    error?: Phrase | undefined
    errorVars?: Record<string, string | number>
  },
) {
  const errorId = `${spec.id}-error`
  return html`<div class="svc-field">
    <label for="${spec.id}">${t(lang, spec.label, spec.labelVars)}</label>
    <input
      id="${spec.id}"
      name="${spec.name ?? spec.id}"
      type="${spec.type ?? 'text'}"
      ${spec.autocomplete ? html`autocomplete="${spec.autocomplete}"` : ''}
      ${spec.required ? html`required` : ''}
      ${spec.minlength ? html`minlength="${spec.minlength}"` : ''}
      ${spec.value ? html`value="${spec.value}"` : ''}
      ${spec.error ? html`aria-invalid="true" aria-describedby="${errorId}"` : ''}
    />
    ${spec.error ? html`<p class="svc-field-error" id="${errorId}">${t(lang, spec.error, spec.errorVars)}</p>` : ''}
  </div>`
}

/**
 * A moment as the pages show it: "5 minutes ago", with the full date and time beside it. The
 * server writes it in UTC; the browser rewrites it in the reader's own zone (`LOCAL_TIME_SCRIPT`).
 */
export const when = (lang: Lang, at: Date) =>
  html`<time datetime="${at.toISOString()}" data-when title="${formatWhen(lang, at)}"
    >${formatRelative(lang, at)} (${formatWhen(lang, at)})</time
  >`

/** A date and time alone ("24 Nov 2026, 23:40 GST"), in the reader's zone once the script ran. */
export const at = (lang: Lang, moment: Date) =>
  html`<time datetime="${moment.toISOString()}" data-when="full">${formatWhen(lang, moment)}</time>`

/** A phrase whose slots take markup (a `<time>`, a link); the phrase's own words stay escaped. */
export function phraseHtml(lang: Lang, phrase: Phrase, vars: Record<string, Html | string | number>): Html {
  const parts = t(lang, phrase).split(/\{(\w+)\}/)
  return html`${parts.map((part, i) => (i % 2 === 0 ? part : part in vars ? vars[part] : `{${part}}`))}`
}

/**
 * The local-time script: each `<time data-when>` in the reader's time zone, in the page's language
 * ("5 minutes ago (24 Nov 2026, 23:40 GST)"), the ISO value kept in `datetime`.
 */
export const LOCAL_TIME_SCRIPT = `(() => {
  const lang = document.documentElement.lang === 'ar' ? 'ar' : 'en-GB'
  const full = new Intl.DateTimeFormat(lang, {
    day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit',
    hourCycle: 'h23', timeZoneName: 'short',
  })
  const relative = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' })
  const ago = (at) => {
    const seconds = Math.round((at.getTime() - Date.now()) / 1000)
    for (const [unit, size] of [['day', 86400], ['hour', 3600], ['minute', 60]])
      if (Math.abs(seconds) >= size) return relative.format(Math.round(seconds / size), unit)
    return relative.format(0, 'second')
  }
  const show = () => {
    for (const node of document.querySelectorAll('time[data-when]')) {
      const at = new Date(node.getAttribute('datetime'))
      if (Number.isNaN(at.getTime())) continue
      node.textContent = node.dataset.when === 'full' ? full.format(at) : ago(at) + ' (' + full.format(at) + ')'
      node.title = full.format(at)
      node.dataset.local = 'true'
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', show)
  else show()
})()
`
