import fc from 'fast-check'
import { type Failure, hasShape, type Shape } from './bad-input.ts'
import { key, type Operation } from './operations.ts'
import { toFormText, toJsonText, validValue } from './values.ts'

export interface AuthProbe {
  /** What the probe asserts, as the failure names it. */
  expect: number
  headers: Record<string, string>
  /** Path parameters to use (object ids); others get a well-formed placeholder. */
  ids?: Record<string, string>
}

/** A well-formed request to an operation: placeholder path parameters, required query, a valid body. */
export function wellFormed(op: Operation, baseUrl: string, ids: Record<string, string> = {}, seed = 16) {
  const path = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) =>
    encodeURIComponent(ids[name] ?? 'sweep-probe-id'),
  )
  const query = new URLSearchParams()
  for (const p of op.parameters.filter((q) => q.in === 'query' && q.required)) {
    const value = p.schema?.default ?? fc.sample(validValue(p.schema), { seed, numRuns: 1 })[0]
    query.set(p.name, typeof value === 'string' ? value : JSON.stringify(value))
  }
  const [type, schema] = Object.entries(op.bodies)[0] ?? []
  const value = type ? fc.sample(validValue(schema), { seed, numRuns: 1 })[0] : undefined
  return {
    url: `${baseUrl}${path}${query.size ? `?${query}` : ''}`,
    headers: type ? { 'content-type': type } : ({} as Record<string, string>),
    body: type ? (type.includes('form') ? toFormText(value) : toJsonText(value)) : undefined,
  }
}

/** Sends the probe and answers a failure unless the status is the expected one, in the error shape. */
export async function probe(
  service: string,
  shape: Shape,
  op: Operation,
  baseUrl: string,
  p: AuthProbe,
  label: string,
): Promise<Failure | undefined> {
  const req = wellFormed(op, baseUrl, p.ids)
  const res = await fetch(req.url, {
    method: op.method,
    headers: { accept: 'application/json', ...req.headers, ...p.headers },
    body: req.body,
    redirect: 'manual',
  })
  const text = await res.text()
  let shaped = false
  try {
    shaped = hasShape(shape, JSON.parse(text))
  } catch {}
  if (res.status === p.expect && shaped) return undefined
  return {
    service,
    op: key(op.method, op.path).replace('{}', '{…}'),
    problem: label === 'tenancy' ? 'tenancy' : 'not refused',
    request: `${op.method} ${req.url} [${label}: expected ${p.expect}] ${req.body?.slice(0, 200) ?? ''}`,
    status: res.status,
    body: text.slice(0, 300),
  }
}

/** The segment naming the collection an id parameter belongs to: `tokens` for `/api/tokens/{id}/rotate`. */
export function collectionOf(op: Operation): { param: string; collection: string } | undefined {
  const match = /\/([^/{}]+)\/\{([^}]+)\}/.exec(op.path)
  return match ? { collection: match[1]!, param: match[2]! } : undefined
}
