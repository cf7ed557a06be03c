// @ts-check
// Calls to the rental's /api with the session cookie (same origin) and, on every write, the CSRF
// header that GET /api/me names. An error answer becomes an ApiError carrying the API's code (and its
// message, for the few screens that read a named id from it: never shown).

let csrf = { header: 'x-csrf-token', token: '' }
// the console's language, sent with every call: the catalogue's words, amounts and errors follow it
let language = 'en'

/** The language the API answers in (Accept-Language); the member's stored one is kept equal (app.js). */
export const setApiLang = (lang) => {
  language = lang
}

/** The event an answer 401 raises on the window. */
export const SIGNED_OUT = 'console:signed-out'

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** GET /api/me: who is signed in; keeps the session's CSRF token for the writes. */
export async function loadMe() {
  const me = await api('GET', '/api/me')
  csrf = { header: me.csrf_header, token: me.csrf_token }
  return me
}

/**
 * One call of the rental's API; its answer is typed by the route the path stands for (api-types.d.ts).
 * `extra`: more request headers (an Idempotency-Key).
 * @template {import('./api-types').Method} M
 * @template {string} P
 * @param {M} method
 * @param {P} path
 * @param {unknown} [body]
 * @param {Record<string, string>} [extra]
 * @returns {Promise<import('./api-types').Answer<M, P>>}
 */
export async function api(method, path, body, extra = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', 'accept-language': language, ...extra }
  if (method !== 'GET') headers[csrf.header] = csrf.token
  if (body !== undefined) headers['content-type'] = 'application/json'
  let res
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  } catch {
    throw new ApiError(0, 'network', '')
  }
  const text = await res.text()
  let parsed = null
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {}
  if (!res.ok) {
    // the session ended (expired, or signed out elsewhere): app.js offers to sign in again
    if (res.status === 401) globalThis.dispatchEvent(new globalThis.Event(SIGNED_OUT))
    const error = parsed?.error
    throw new ApiError(res.status, error?.code ?? 'http_' + res.status, error?.message ?? text.slice(0, 300))
  }
  return parsed
}

/** Whether the call failed because the session ended (401): app.js's one banner says so, with its button. */
export const signedOutBy = (error) => error instanceof ApiError && error.status === 401

/**
 * The words to show for a failed call: the catalogue's sentence for its code (what went wrong, what
 * to do next), never the API's message, which may hold schema paths or routes. Errors the console
 * raises itself (a form's own check) carry words already.
 */
export function messageOf(error, t) {
  if (error instanceof ApiError) {
    if (error.code === 'network') return t('error.network')
    const key = `error.code.${error.code}`
    const sentence = t(key)
    if (sentence !== key) return sentence
    if (error.status === 401) return t('error.signed_out')
    return t(error.status >= 500 ? 'error.server' : 'error.unknown')
  }
  return error?.message ?? String(error)
}
