import fc from 'fast-check'

/** A JSON Schema as the OpenAPI documents give it (the subset TypeBox emits). */
export interface Schema {
  type?: string | string[]
  enum?: unknown[]
  const?: unknown
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  additionalProperties?: boolean | Schema
  items?: Schema
  minItems?: number
  maxItems?: number
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  pattern?: string
  format?: string
  default?: unknown
}

/** Strings a careless server mishandles: control characters, bidi marks, lone surrogates, markup, paths. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u202eevil\u202c',
  '\u200f\u200e',
  '\ud800',
  'x\udfffy',
  '😀'.repeat(50),
  '../../../etc/passwd',
  "' or 1=1 --",
  '<script>alert(1)</script>',
  '%00%zz',
  '\r\nX-Injected: 1',
  'a'.repeat(10_000),
  '𝕏'.repeat(3_000),
]

/** Numbers at and past the edges, written as raw JSON tokens (1e309 is Infinity; 2^63 is not an int64). */
export const ODD_NUMBER_TOKENS = [
  '1e309',
  '-1e309',
  '-1',
  '0',
  '-0',
  '1.5',
  '9223372036854775808',
  '18446744073709551616',
  '1e-400',
  '123456789012345678901234567890',
]

/** A value of the schema (best effort: it aims to pass validation, so the request gets past it). */
export function validValue(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return fc.constant('x')
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (schema.enum) return fc.constantFrom(...schema.enum)
  const alternatives = schema.anyOf ?? schema.oneOf
  if (alternatives?.length) return fc.oneof(...alternatives.map((s) => validValue(s, depth + 1)))
  if (schema.allOf?.length) return validValue(Object.assign({}, ...schema.allOf) as Schema, depth + 1)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string': {
      const minLength = schema.minLength ?? 0
      const maxLength = Math.min(schema.maxLength ?? 40, Math.max(minLength, 40))
      if (schema.pattern) {
        try {
          return fc
            .stringMatching(new RegExp(schema.pattern))
            .filter((s) => s.length >= minLength && s.length <= (schema.maxLength ?? Infinity))
        } catch {
          return fc.string({ minLength, maxLength })
        }
      }
      if (schema.format === 'email') return fc.emailAddress()
      if (schema.format === 'uri') return fc.webUrl()
      // dates ahead, as an expiry is: a well-formed request should not fail on a date in the past
      if (schema.format === 'date-time')
        return fc
          .date({ min: new Date('2031-01-01'), max: new Date('2099-01-01'), noInvalidDate: true })
          .map((d) => d.toISOString())
      return fc.string({ minLength, maxLength, unit: 'grapheme-ascii' })
    }
    case 'integer':
      return fc.integer({
        min: Math.max(schema.minimum ?? -1_000, -(2 ** 31)),
        max: Math.min(schema.maximum ?? 1_000_000, 2 ** 31),
      })
    case 'number':
      return fc.double({
        min: schema.minimum ?? -1e6,
        max: schema.maximum ?? 1e6,
        noNaN: true,
        noDefaultInfinity: true,
      })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(validValue(schema.items, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, Math.max(schema.minItems ?? 0, 3)),
      })
    case 'object':
    default: {
      const properties = schema.properties ?? {}
      if (Object.keys(properties).length === 0) return fc.constant({})
      const required = new Set(schema.required ?? [])
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, sub] of Object.entries(properties)) record[name] = validValue(sub, depth + 1)
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in properties) })
    }
  }
}

/** A value of another JSON type than the schema's: what a client sending the wrong type sends. */
export const wrongTypeValue = (schema: Schema | undefined): fc.Arbitrary<unknown> => {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.constantFrom('12345', 'true', ''),
    number: fc.constantFrom(12345, -1, 0.5),
    boolean: fc.boolean(),
    null: fc.constant(null),
    object: fc.constant({ nested: { deeper: [1, 'two'] } }),
    array: fc.constant(['a', 1, null]),
  }
  const numeric = type === 'integer' || type === 'number'
  return fc.oneof(
    ...Object.entries(all)
      .filter(([name]) => name !== type && !(numeric && name === 'number'))
      .map(([, arb]) => arb),
  )
}

/** A raw token standing for a value that JSON.stringify cannot write (1e309) or writes differently. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** One malformed variant of a value of `schema`: a field of the wrong type, missing, extra or at an edge. */
export function malformedValue(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const properties = schema?.properties ?? {}
  const names = Object.keys(properties)
  const base = validValue(schema) as fc.Arbitrary<Record<string, unknown>>
  const oddLeaf = fc.oneof(
    fc.constantFrom(...ODD_STRINGS),
    fc.constantFrom(...ODD_NUMBER_TOKENS).map((t) => new RawJson(t)),
  )
  const variants: Array<fc.Arbitrary<unknown>> = [
    // the body is not an object at all
    fc.constantFrom(null, [], 'text', 12345, true, new RawJson('1e309')),
    // an unknown field
    base.map((v) => ({ ...(isObject(v) ? v : {}), unexpected_field: 'x', __proto__field: 1 })),
  ]
  if (names.length > 0) {
    const field = fc.constantFrom(...names)
    variants.push(
      // one field of the wrong type
      fc
        .tuple(base, field)
        .chain(([v, name]) =>
          wrongTypeValue(properties[name]).map((bad) => ({ ...(isObject(v) ? v : {}), [name]: bad })),
        ),
      // one field at an edge: odd strings, non-finite and oversized numbers
      fc.tuple(base, field, oddLeaf).map(([v, name, odd]) => ({ ...(isObject(v) ? v : {}), [name]: odd })),
      // a nested object or array given where its items are expected, and vice versa
      fc.tuple(base, field).map(([v, name]) => ({ ...(isObject(v) ? v : {}), [name]: [[[{}]]] })),
    )
  }
  const required = (schema?.required ?? []).filter((name) => name in properties)
  if (required.length > 0)
    variants.push(
      fc.tuple(base, fc.constantFrom(...required)).map(([v, name]) => {
        const copy = { ...(isObject(v) ? v : {}) }
        delete copy[name]
        return copy
      }),
    )
  return fc.oneof(...variants)
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RawJson)

/** JSON text of a value, with RawJson tokens written as they are. */
export function toJsonText(value: unknown): string {
  const tokens: string[] = []
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof RawJson) {
      tokens.push(v.text)
      return `\u0001raw${tokens.length - 1}\u0001`
    }
    return v
  })
  return (text ?? 'null').replace(/"\\u0001raw(\d+)\\u0001"/g, (_m, i: string) => tokens[Number(i)]!)
}

/** A form body of a value: each field once, arrays as repeated fields, everything as text. */
export function toFormText(value: unknown): string {
  const form = new URLSearchParams()
  if (!isObject(value)) return `value=${encodeURIComponent(toJsonText(value))}`
  for (const [name, v] of Object.entries(value)) {
    for (const item of Array.isArray(v) ? v : [v])
      form.append(
        name,
        item instanceof RawJson ? item.text : typeof item === 'string' ? item : toJsonText(item),
      )
  }
  return form.toString()
}

/** A query or path value of a schema as text: valid or malformed. */
export function textValue(schema: Schema | undefined, malformed: boolean): fc.Arbitrary<string> {
  const valid = validValue(schema).map((v) => (typeof v === 'string' ? v : toJsonText(v)))
  if (!malformed) return valid
  return fc.oneof(
    fc.constantFrom(...ODD_NUMBER_TOKENS, 'abc', 'true', 'null', '[]', '{}', ''),
    fc.constantFrom(...ODD_STRINGS.filter((s) => s.length < 5_000)),
    valid,
  )
}
