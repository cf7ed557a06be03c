import { AppError } from '../errors.ts'
import type { App } from './server.ts'

// parsed JSON, forms and query strings; a raw body (a Buffer) holds bytes, not numbers
const isParsed = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !ArrayBuffer.isView(value)

/** The path of the first number in `value` that is not finite, if any (iterative: any depth). */
function nonFinite(root: unknown, rootPath: string): string | undefined {
  const stack: Array<[unknown, string]> = [[root, rootPath]]
  while (stack.length > 0) {
    const [value, path] = stack.pop()!
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return path
      continue
    }
    if (!isParsed(value)) continue
    const array = Array.isArray(value)
    for (const [key, inner] of Object.entries(value))
      stack.push([inner, array ? `${path}[${key}]` : `${path}.${key}`])
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
      if (where) throw new AppError(400, 'invalid_request', `${where} must be a finite number`)
    }
  })
}
