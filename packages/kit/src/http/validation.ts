import { parse as parseQuery } from 'node:querystring'
import AjvCompiler from '@fastify/ajv-compiler'
import SerializerSelector, { type RouteDefinition } from '@fastify/fast-json-stringify-compiler'
import type { FastifyRequest, FastifySchemaValidationError, FastifySerializerCompiler } from 'fastify'
import { AppError } from '../errors.ts'

const BASE = { removeAdditional: false, useDefaults: true, allErrors: false } as const

/**
 * Query strings, path parameters, headers and form bodies are text by nature, so their values are
 * coerced to the declared types; a JSON body says its own types, and `{"label": 12345}` where a
 * string is declared is a 400, not the string "12345".
 */
const coercing = AjvCompiler()({}, { customOptions: { ...BASE, coerceTypes: 'array' } })
const strict = AjvCompiler()({}, { customOptions: { ...BASE, coerceTypes: false } })

/** Bodies parsed from application/x-www-form-urlencoded: validated with coercion like a query string. */
const formBodies = new WeakSet<object>()

export function parseForm(text: string): Record<string, unknown> {
  const parsed = parseQuery(text) as Record<string, unknown>
  formBodies.add(parsed)
  return parsed
}

type Validate = ((data: unknown) => boolean) & { errors?: FastifySchemaValidationError[] | null }

/**
 * In tests a route's schemas are compiled on the route's first request, and once per process for
 * a schema object several apps share: a test file starts whole services, often several times, and
 * compiling every route's schemas at each start was most of a start's CPU. A service in
 * production compiles them all at start, so a broken schema stops the boot.
 */
const LAZY = process.env.NODE_ENV === 'test'
const validators = { body: new WeakMap<object, Validate>(), other: new WeakMap<object, Validate>() }
const serializers = new WeakMap<object, (data: unknown) => string>()

function once<F>(cache: WeakMap<object, F>, schema: object, make: () => F): F {
  let made = cache.get(schema)
  if (!made) cache.set(schema, (made = make()))
  return made
}

/** Fastify's validator compiler: a body is checked strictly unless it came from a form. */
export function compileValidator({ schema, httpPart }: { schema: object; httpPart?: string }): Validate {
  if (!LAZY) return compileNow({ schema, httpPart })
  const cache = httpPart === 'body' ? validators.body : validators.other
  let compiled: Validate | undefined
  const validate: Validate = (data) => {
    compiled ??= once(cache, schema, () => compileNow({ schema, httpPart }))
    const ok = compiled(data)
    validate.errors = compiled.errors
    return ok
  }
  return validate
}

function compileNow({ schema, httpPart }: { schema: object; httpPart?: string }): Validate {
  if (httpPart !== 'body') return coercing({ schema }) as Validate
  const exact = strict({ schema }) as Validate
  // most routes never see a form: their coercing validator is compiled on the first one, not at start
  let fromForm: Validate | undefined
  const validate: Validate = (data) => {
    const isForm = typeof data === 'object' && data !== null && formBodies.has(data)
    const chosen = isForm ? (fromForm ??= coercing({ schema }) as Validate) : exact
    const ok = chosen(data)
    // the error formatter words a repeated form field differently from a JSON value of the wrong type
    validate.errors =
      isForm && Array.isArray(chosen.errors)
        ? chosen.errors.map((e) => ({ ...e, params: { ...e.params, form: true } }))
        : chosen.errors
    return ok
  }
  return validate
}

const UTF8 = new Set(['utf-8', 'utf8'])
const TEXT_BODY = /^application\/(?:[\w.+-]+\+)?json$|^application\/x-www-form-urlencoded$/

/**
 * RFC 9110 §8.4 and §15.5.16: a body in a content coding the server does not decode, or JSON or a
 * form in a charset other than UTF-8, is 415 rather than silently misread.
 */
export function refuseUndecodableBody(request: FastifyRequest): void {
  const encoding = request.headers['content-encoding']
  if (encoding !== undefined) {
    const codings = encoding
      .split(',')
      .map((c) => c.trim().toLowerCase())
      .filter(Boolean)
    if (codings.some((c) => c !== 'identity'))
      throw new AppError(
        415,
        'unsupported_media_type',
        `content-encoding ${JSON.stringify(encoding.slice(0, 40))} is not supported: send the body uncompressed`,
        { 'accept-encoding': 'identity' },
      )
  }
  const type = request.headers['content-type']
  if (!type) return
  const [mediaType = '', ...params] = type.split(';').map((p) => p.trim())
  if (!TEXT_BODY.test(mediaType.toLowerCase())) return
  for (const param of params) {
    const at = param.indexOf('=')
    if (param.slice(0, at).trim().toLowerCase() !== 'charset') continue
    const charset = param
      .slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase()
    if (!UTF8.has(charset))
      throw new AppError(
        415,
        'unsupported_media_type',
        `charset ${JSON.stringify(charset.slice(0, 40))} is not supported: ${mediaType} bodies are UTF-8`,
      )
  }
}

const buildSerializer = SerializerSelector()({}, {})

/** Fastify's serializer compiler (its default, fast-json-stringify), lazy in tests like the validators. */
export const compileSerializer: FastifySerializerCompiler<unknown> = (route) => {
  const definition = route as RouteDefinition
  if (!LAZY) return buildSerializer(definition)
  let compiled: ((data: unknown) => string) | undefined
  return (data) =>
    (compiled ??= once(serializers, route.schema as object, () => buildSerializer(definition)))(data)
}
