// Calls to the rental's /api with the session cookie (same origin) and, on every write, the CSRF
// header that GET /api/me names. An error answer becomes an ApiError carrying the API's message.

let csrf = { header: 'x-csrf-token', token: '' }

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

export async function api(method, path, body) {
  const headers = { accept: 'application/json' }
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
    const error = parsed?.error
    throw new ApiError(res.status, error?.code ?? 'http_' + res.status, error?.message ?? text.slice(0, 300))
  }
  return parsed
}

/** The words to show for a failed call: the API's own message, or what went wrong with the network. */
export function messageOf(error, t) {
  if (error instanceof ApiError) {
    if (error.code === 'network') return t('error.network')
    if (error.status === 401) return t('error.signed_out')
    return error.message
  }
  return error?.message ?? String(error)
}
