import { createHash } from 'node:crypto'
import { Html, html } from '@svc/kit'
import { designAssets } from '@svc/kit/design/assets'
import { IMPORT_MAP } from './files.ts'

const importMapHash = `'sha256-${createHash('sha256').update(IMPORT_MAP).digest('base64')}'`

/**
 * The console's policy: its own origin only; no inline script but the import map (by its hash),
 * no inline style, no plugin, no framing, no `<base>`. `connect-src 'self'` keeps the API calls
 * and the events stream on the rental.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  `script-src 'self' ${importMapHash}`,
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ')

export const CONSOLE_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
}

/** The style sheet shared with the idp's pages (tokens, buttons, fields), linked before the console's own. */
export const DESIGN_CSS_PATH = '/console/design.css'
/**
 * A signed-out browser's `/console`: `sign-in.js` keeps the screen its fragment names (a bookmark,
 * a mailed `#/tasks/{id}`) and the language asked (`?lang=`, the cookie) for after the sign-in, then goes to `signIn`; without script, the
 * refresh and the link go there too.
 */
export const signInPage = (asked: 'en' | 'ar' | undefined, signIn: string) => {
  const lang = asked ?? 'en'
  return html`<!doctype html>
<html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}" data-sign-in="${signIn}" data-lang="${asked ?? ''}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${lang === 'ar' ? 'تسجيل الدخول' : 'Sign in'}</title>
<script src="/console/assets/sign-in.js"></script>
<meta http-equiv="refresh" content="1;url=${signIn}">
</head>
<body><p><a href="${signIn}">${lang === 'ar' ? 'تسجيل الدخول' : 'Sign in'}</a></p></body></html>`.toString()
}

/** The console's style sheets, in cascade order: the base, then the client and the tenant screens'. */
const STYLE_SHEETS = ['console.css', 'console-client.css', 'console-tenant.css', 'console-controls.css']

/**
 * The console's one page: the import map, the style sheet and the module that renders everything
 * (its screens are hash routes, `#/market`, `#/engagements/{id}`…). The language asked with `lang`
 * is only the first paint's: the script keeps the person's choice in localStorage.
 */
export const consolePage = (lang: 'en' | 'ar') =>
  html`<!doctype html>
<html lang="${lang}" dir="${lang === 'ar' ? 'rtl' : 'ltr'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${lang === 'ar' ? 'لوحة التحكم' : 'Console'}</title>
<link rel="icon" type="image/svg+xml" href="/favicon.svg?v=${designAssets().favicon.version}">
<link rel="stylesheet" href="${DESIGN_CSS_PATH}?v=${designAssets().css.version}">
${STYLE_SHEETS.map(
  (sheet) => html`<link rel="stylesheet" href="/console/assets/${sheet}">
`,
)}<script type="importmap">${new Html(IMPORT_MAP)}</script>
<script type="module" src="/console/assets/app.js"></script>
</head>
<body><div id="app"><p class="loading">…</p></div>
<noscript>The console needs JavaScript (it signs in your browser with your own key).</noscript>
</body></html>`.toString()
