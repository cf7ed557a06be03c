// @ts-check
// The console's words in English and Arabic, the person's language (remembered), and how amounts
// and dates are written for it: the console's one i18n mechanism. The words are kept by screen group
// (i18n-*.js, each with its English and Arabic); later groups override earlier keys (the market's
// list screens' empty states point to their forms).
import { CONSOLE_EN } from './i18n-console.js'
import { CONSOLE_AR } from './i18n-console-ar.js'
import { CLIENT_EN } from './i18n-client.js'
import { CLIENT_AR } from './i18n-client-ar.js'
import { MARKET_AR, MARKET_EN } from './i18n-market.js'
import { TENANT_AR, TENANT_EN } from './i18n-tenant.js'
import { ERRORS_EN } from './i18n-errors.js'
import { ERRORS_AR } from './i18n-errors-ar.js'
import { LAYOUT_AR, LAYOUT_EN } from './i18n-layout.js'
import { LISTS_AR, LISTS_EN } from './i18n-lists.js'
import { NAMES_AR, NAMES_EN } from './i18n-names.js'
import { CONTROLS_EN } from './i18n-controls.js'
import { CONTROLS_AR } from './i18n-controls-ar.js'

/** The published error codes' sentences as catalogue keys: `error.code.<code>`. */
const errorKeys = (sentences) =>
  Object.fromEntries(Object.entries(sentences).map(([code, sentence]) => [`error.code.${code}`, sentence]))

/**
 * The one catalogue of the console, by screen group: each group's English and Arabic words (same
 * keys: a test checks it), and the error codes' sentences. A later group's key overrides an earlier
 * group's in both languages.
 */
export const GROUPS = [
  ['console', CONSOLE_EN, CONSOLE_AR],
  ['client', CLIENT_EN, CLIENT_AR],
  ['tenant', TENANT_EN, TENANT_AR],
  ['market', MARKET_EN, MARKET_AR],
  ['layout', LAYOUT_EN, LAYOUT_AR],
  ['lists', LISTS_EN, LISTS_AR],
  ['names', NAMES_EN, NAMES_AR],
  ['controls', CONTROLS_EN, CONTROLS_AR],
  ['errors', errorKeys(ERRORS_EN), errorKeys(ERRORS_AR)],
]

const en = Object.assign({}, ...GROUPS.map(([, words]) => words))
const ar = Object.assign({}, ...GROUPS.map(([, , words]) => words))

export const CATALOGUES = { en, ar }
const KEY = 'console.lang'

/** The language: `?lang=` when given (then remembered), else the remembered one, else English. */
export function initialLang() {
  const asked = new URLSearchParams(location.search).get('lang')
  if (asked === 'en' || asked === 'ar') {
    remember(asked)
    return asked
  }
  try {
    const kept = localStorage.getItem(KEY)
    if (kept === 'en' || kept === 'ar') {
      remember(kept)
      return kept
    }
  } catch {}
  return 'en'
}

// also a cookie: signed out, /console asks the idp for its sign-in page in it (ui_locales)
export function remember(lang) {
  try {
    localStorage.setItem(KEY, lang)
  } catch {}
  document.cookie = `console_lang=${lang}; Path=/; Max-Age=31536000; SameSite=Lax${location.protocol === 'https:' ? '; Secure' : ''}`
}

/**
 * What stands between the facts of one line: a spaced middle dot, in Arabic a comma (a middle dot
 * beside Arabic-Indic digits reads as a zero: "٣٠٪ · " would look like "٣٠٠٪").
 */
export const separator = (lang) => (lang === 'ar' ? '، ' : ' · ')

/** Sets the page's language and direction (Arabic right to left). */
export function applyLang(lang) {
  document.documentElement.lang = lang
  document.documentElement.dir = lang === 'ar' ? 'rtl' : 'ltr'
  document.title = `${CATALOGUES[lang].title} · Agent rental`
}

/**
 * A translator for `lang`: `t('key', {name: value})`. In Arabic each value is isolated (U+2068 …
 * U+2069, as `<bdi>`): an English name or sentence inside keeps its own direction, its full stop
 * at its end.
 */
export const translator = (lang) => {
  const [open, close] = lang === 'ar' ? ['\u2068', '\u2069'] : ['', '']
  return (key, values = {}) =>
    (CATALOGUES[lang][key] ?? CATALOGUES.en[key] ?? key).replace(/\{(\w+)\}/g, (_, name) => {
      const value = String(values[name] ?? '')
      return value ? `${open}${value}${close}` : ''
    })
}

/** A role's name in the language; a custom role (data, not code) keeps its own name. */
export const roleName = (role, lang) => CATALOGUES[lang][`role.${role}`] ?? role

const locale = (lang) => (lang === 'ar' ? 'ar-AE-u-nu-arab' : 'en-AE')

/**
 * An amount of minor units as the kit's `money()` writes it: the exact decimal string (never a float
 * division) formatted by Intl in the same locale. For the routes that answer `price_fils` only;
 * where the API gives a `display`, the console shows that.
 */
export function formatFils(fils, currency, lang) {
  const value = BigInt(fils)
  const sign = value < 0n ? '-' : ''
  const digits = (value < 0n ? -value : value).toString().padStart(3, '0')
  const decimal = /** @type {`${number}`} */ (`${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`)
  return new Intl.NumberFormat(locale(lang), { style: 'currency', currency }).format(decimal)
}

/** A date and time in the browser's time zone (or `options`' own), in the person's language. */
export function formatDate(iso, lang, options = {}) {
  if (!iso) return ''
  /** @type {Intl.DateTimeFormatOptions} */
  const style = { dateStyle: 'medium', timeStyle: 'short', ...options }
  return new Intl.DateTimeFormat(locale(lang), style).format(new Date(iso))
}

// ---- client screens: numbers (counts, percentages, units) written for the language
/** A number in the language's digits and conventions (`options` as Intl.NumberFormat's). */
export function formatNumber(value, lang, options = {}) {
  return new Intl.NumberFormat(locale(lang), options).format(value)
}
