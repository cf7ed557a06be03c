import canonicalizeJson from 'canonicalize'

/**
 * The JSON Canonicalization Scheme (RFC 8785). Values JSON cannot represent (undefined, functions,
 * bigint, NaN, Infinity) throw rather than being dropped or rewritten.
 */
export function canonicalize(value: unknown): string {
  assertJson(value, '$')
  const text = canonicalizeJson(value)
  if (text === undefined) throw new TypeError('value has no JSON form')
  return text
}

/** The UTF-8 bytes of the canonical form: what a party signs. */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalize(value))
}

function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${path} is not a finite number`)
    return
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => assertJson(v, `${path}[${i}]`))
    return
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) assertJson(v, `${path}.${k}`)
    return
  }
  throw new TypeError(`${path} is not a JSON value (${typeof value})`)
}
