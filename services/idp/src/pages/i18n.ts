import type { FastifyReply, FastifyRequest } from 'fastify'
import { AR } from './arabic.ts'

/** The hosted pages' languages: English, and Arabic (right to left). */
export type Lang = 'en' | 'ar'
export const LANGS: readonly Lang[] = ['en', 'ar']
/** A phrase of the hosted pages, in English; its Arabic is in ./arabic.ts (a missing one fails typecheck). */
export type Phrase = keyof typeof AR

/** The language chosen with the pages' switch, kept for a year. */
export const LANG_COOKIE = 'svc_lang'
const LANG_COOKIE_DAYS = 365

const supported = (tag: string): Lang | undefined => {
  const primary = tag.trim().toLowerCase().split('-')[0]
  return primary === 'en' || primary === 'ar' ? primary : undefined
}

/** OIDC Core §3.1.2.1 `ui_locales`: space-separated BCP 47 tags, most preferred first; the first supported wins. */
export function fromUiLocales(value: unknown): Lang | undefined {
  if (typeof value !== 'string') return undefined
  for (const tag of value.slice(0, 500).split(' ')) {
    const lang = supported(tag)
    if (lang) return lang
  }
  return undefined
}

/** RFC 9110 §12.5.4: the supported language with the highest weight (the first listed among equals). */
export function fromAcceptLanguage(header: unknown): Lang | undefined {
  if (typeof header !== 'string') return undefined
  const ranked = header
    .slice(0, 1000)
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.split(';')
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined)
      return { lang: supported(tag), q: q === undefined ? 1 : Number(q), i }
    })
    .filter((r) => r.lang && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
  return ranked[0]?.lang
}

/**
 * `ui_locales` of the request, of its form, or of the authorization request it returns to (the
 * sign-in and consent pages carry `/authorize?…` in `return_to`).
 */
function uiLocalesOf(request: FastifyRequest): Lang | undefined {
  for (const source of [request.query, request.body] as Array<Record<string, unknown> | undefined>) {
    if (!source || typeof source !== 'object') continue
    const direct = fromUiLocales(source.ui_locales)
    if (direct) return direct
    const returnTo = source.return_to
    if (typeof returnTo === 'string' && returnTo.startsWith('/authorize?')) {
      const inner = fromUiLocales(new URLSearchParams(returnTo.slice('/authorize?'.length)).get('ui_locales'))
      if (inner) return inner
    }
  }
  return undefined
}

/**
 * The language of a hosted page: the one the person chose with the switch (a cookie), else the
 * application's `ui_locales`, else `Accept-Language`, else English (Keycloak's order: a choice made
 * on the page outranks what the application suggests).
 */
export function langOf(request: FastifyRequest): Lang {
  const chosen = request.cookies?.[LANG_COOKIE]
  if (chosen === 'en' || chosen === 'ar') return chosen
  return uiLocalesOf(request) ?? fromAcceptLanguage(request.headers['accept-language']) ?? 'en'
}

export function rememberLang(reply: FastifyReply, lang: Lang, secure: boolean) {
  reply.setCookie(LANG_COOKIE, lang, {
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    maxAge: LANG_COOKIE_DAYS * 86_400,
  })
}

/** A phrase in `lang`, its `{name}` slots filled from `vars`. */
export function t(lang: Lang, phrase: Phrase, vars: Record<string, string | number> = {}): string {
  // a name (an app's, a person's) passed where a phrase may be stays as it is
  const text: string = (lang === 'ar' ? (AR as Record<string, string>)[phrase] : undefined) ?? phrase
  return text.replace(/\{(\w+)\}/g, (slot, name: string) => (name in vars ? String(vars[name]) : slot))
}

const DATE_LOCALE: Record<Lang, string> = { en: 'en-GB', ar: 'ar' }

/** "24 Nov 2026, 19:40 UTC" (the server knows no time zone of the reader's; UTC is said). */
export function formatWhen(lang: Lang, when: Date): string {
  return new Intl.DateTimeFormat(DATE_LOCALE[lang], {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZone: 'UTC',
    timeZoneName: 'short',
  }).format(when)
}

/** "now", "5 minutes ago", "in 3 hours", "yesterday": the nearest unit, in `lang`. */
export function formatRelative(lang: Lang, when: Date, now = new Date()): string {
  const seconds = Math.round((when.getTime() - now.getTime()) / 1000)
  const units: Array<[Intl.RelativeTimeFormatUnit, number]> = [
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
  ]
  const format = new Intl.RelativeTimeFormat(DATE_LOCALE[lang], { numeric: 'auto' })
  for (const [unit, size] of units)
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit)
  // under a minute is "now", not a count of seconds
  return format.format(0, 'second')
}

/** Browser and system of a User-Agent as people name them: "Chrome on Linux". */
export function describeDevice(lang: Lang, userAgent: string | null | undefined): string {
  if (!userAgent) return t(lang, 'Unknown device')
  const browser = [
    [/Edg(e|A|iOS)?\//, 'Edge'],
    [/OPR\/|Opera/, 'Opera'],
    [/Firefox\/|FxiOS\//, 'Firefox'],
    [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'],
    [/Safari\//, 'Safari'],
  ].find(([pattern]) => (pattern as RegExp).test(userAgent))?.[1] as string | undefined
  const system = [
    [/iPhone|iPad|iPod/, 'iOS'],
    [/Android/, 'Android'],
    [/CrOS/, 'ChromeOS'],
    [/Windows/, 'Windows'],
    [/Mac OS X|Macintosh/, 'macOS'],
    [/Linux|X11/, 'Linux'],
  ].find(([pattern]) => (pattern as RegExp).test(userAgent))?.[1] as string | undefined
  if (browser && system) return t(lang, '{browser} on {system}', { browser, system })
  if (browser ?? system) return (browser ?? system)!
  // a program rather than a browser (curl, a library): its first product token
  return userAgent.split(/\s/)[0]!.slice(0, 40)
}
