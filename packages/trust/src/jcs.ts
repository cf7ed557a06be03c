import canonicalizeJson from 'canonicalize'

/**
 * The JSON Canonicalization Scheme (RFC 8785). Values JSON cannot represent (undefined, functions,
 * bigint, NaN, Infinity) and strings that are not valid Unicode (lone surrogates, which I-JSON forbids)
 * throw rather than being dropped or rewritten.
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

// With the u flag a well-formed pair is one code point, so only lone surrogates match.
const LONE_SURROGATE = /\p{Surrogate}/u

function assertString(text: string, path: string): void {
  if (LONE_SURROGATE.test(text)) throw new TypeError(`${path} contains a lone surrogate`)
}

function assertJson(value: unknown, path: string): void {
  if (value === null || typeof value === 'boolean') return
  if (typeof value === 'string') return assertString(value, path)
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${path} is not a finite number`)
    return
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) throw new TypeError(`${path}[${i}] is a hole`)
      assertJson(value[i], `${path}[${i}]`)
    }
    return
  }
  if (typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) {
      assertString(k, `${path} key ${JSON.stringify(k)}`)
      assertJson(v, `${path}.${k}`)
    }
    return
  }
  throw new TypeError(`${path} is not a JSON value (${typeof value})`)
}
