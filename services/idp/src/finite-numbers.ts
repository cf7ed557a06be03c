import { type App } from '@svc/kit'
import { idpError } from './errors.ts'

// parsed JSON, forms and query strings; a raw body (a Buffer) holds bytes, not numbers
const isParsed = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)

/** The path of the first number in `value` that is not finite, if any. */
function nonFinite(value: unknown, path: string): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path
  if (!isParsed(value)) return undefined
  for (const [key, inner] of Object.entries(value)) {
    const found = nonFinite(inner, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`)
    if (found) return found
  }
  return undefined
}

/**
 * Every number a request carries is finite. Ajv turns `?hours=1e309` (or a JSON `1e309`) into
 * Infinity and then skips `minimum` and `maximum` for it, so without this check a bounded
 * number could reach the handler as Infinity.
 */
export function refuseNonFiniteNumbers(app: App) {
  app.addHook('preHandler', async (request) => {
    const parts = { querystring: request.query, params: request.params, body: request.body }
    for (const [name, value] of Object.entries(parts)) {
      const where = nonFinite(value, name)
      if (where) throw idpError('invalid_request', `${where} must be a finite number`)
    }
  })
}
