/**
 * The API reference for people at `GET /docs`: the service's OpenAPI document rendered on the
 * server as one self-contained HTML page (no script, no external style or font), listing every
 * operation with its authentication, parameters, body fields and documented responses.
 */
import type { OpenAPIV3 } from 'openapi-types'
import { type ErrorShape } from './errors.ts'
import { Html, html } from './html.ts'

type Schema = OpenAPIV3.SchemaObject & { const?: unknown }
type Doc = OpenAPIV3.Document
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const

const ERROR_SHAPES: Record<ErrorShape, string> = {
  api: 'errors are JSON {"error": {"code", "message", "request_id"}}',
  oauth: 'errors are RFC 6749 JSON {"error", "error_description"}',
}

/** Resolves a local `$ref` (one level, as @fastify/swagger emits them). */
function resolve<T extends object>(
  doc: Doc,
  value: T | OpenAPIV3.ReferenceObject | undefined,
): T | undefined {
  if (!value || !('$ref' in value)) return value
  const name = value.$ref.replace('#/components/schemas/', '')
  return doc.components?.schemas?.[name] as T | undefined
}

/** A compact type label: `string (date-time, ≤ 100)`, `"a" | "b"`, `integer 1–100`, `array of string`. */
export function typeLabel(doc: Doc, given: Schema | OpenAPIV3.ReferenceObject | undefined): string {
  const schema = resolve<Schema>(doc, given)
  if (!schema) return 'any'
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(' | ')
  const union = schema.anyOf ?? schema.oneOf
  if (union) return union.map((s) => typeLabel(doc, s as Schema)).join(' | ')
  if (schema.type === 'array') return `array of ${typeLabel(doc, schema.items as Schema)}`
  const facts = [
    schema.format,
    schema.minimum !== undefined || schema.maximum !== undefined
      ? `${schema.minimum ?? ''}–${schema.maximum ?? ''}`
      : undefined,
    schema.minLength !== undefined || schema.maxLength !== undefined
      ? `length ${schema.minLength ?? 0}–${schema.maxLength ?? '∞'}`
      : undefined,
    schema.pattern ? `pattern ${schema.pattern}` : undefined,
    schema.default !== undefined ? `default ${JSON.stringify(schema.default)}` : undefined,
  ].filter(Boolean)
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : (schema.type ?? 'any')
  return facts.length ? `${type} (${facts.join(', ')})` : type
}

interface Row {
  name: string
  where: string
  type: string
  required: boolean
  description: string
}

function parameterRows(doc: Doc, op: OpenAPIV3.OperationObject): Row[] {
  const rows: Row[] = (op.parameters ?? []).flatMap((given) => {
    const p = resolve<OpenAPIV3.ParameterObject>(doc, given)
    if (!p) return []
    return [
      {
        name: p.name,
        where: p.in,
        type: typeLabel(doc, p.schema as Schema),
        required: p.required === true,
        description: p.description ?? (resolve<Schema>(doc, p.schema as Schema)?.description || ''),
      },
    ]
  })
  const body = resolve<OpenAPIV3.RequestBodyObject>(doc, op.requestBody)
  for (const [mediaType, content] of Object.entries(body?.content ?? {})) {
    const schema = resolve<Schema>(doc, content.schema as Schema)
    const properties = Object.entries(schema?.properties ?? {})
    if (!properties.length) {
      rows.push({
        name: '(body)',
        where: mediaType,
        type: typeLabel(doc, schema),
        required: body?.required === true,
        description: schema?.description ?? '',
      })
      continue
    }
    for (const [name, property] of properties)
      rows.push({
        name,
        where: `body (${mediaType})`,
        type: typeLabel(doc, property as Schema),
        required: schema?.required?.includes(name) === true,
        description: resolve<Schema>(doc, property as Schema)?.description ?? '',
      })
  }
  return rows
}

const anchor = (method: string, path: string) =>
  `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '')

function operation(doc: Doc, path: string, method: string, op: OpenAPIV3.OperationObject): Html {
  const rows = parameterRows(doc, op)
  const security = (op.security ?? doc.security ?? [])
    .map((requirement) => Object.keys(requirement).join(' + '))
    .filter(Boolean)
  const responses = Object.entries(op.responses ?? {}).map(([status, given]) => {
    const response = resolve<OpenAPIV3.ResponseObject>(doc, given)
    const description = response?.description === 'Default Response' ? '' : (response?.description ?? '')
    return html`<li><code>${status}</code> ${description}</li>`
  })
  return html`<section id="${anchor(method, path)}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${path}</code></h3>
${op.summary ? html`<p>${op.summary}</p>` : ''}${op.description ? html`<p class="d">${op.description}</p>` : ''}
<p class="auth">${security.length ? html`Authentication: ${security.join(' or ')}` : 'No authentication'}</p>
${
  rows.length
    ? html`<table><thead><tr><th>name</th><th>in</th><th>type</th><th>required</th><th>description</th></tr></thead><tbody>
${rows.map((r) => html`<tr><td><code>${r.name}</code></td><td>${r.where}</td><td>${r.type}</td><td>${r.required ? 'yes' : 'no'}</td><td>${r.description}</td></tr>\n`)}</tbody></table>`
    : ''
}
${responses.length ? html`<p>Responses:</p><ul>${responses}</ul>` : ''}
</section>
`
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
code{font:13px ui-monospace,monospace}table{border-collapse:collapse;width:100%;margin:.5rem 0}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}th{background:#f5f5f5}
section{border-top:1px solid #eee;padding:.5rem 0}.m{display:inline-block;min-width:4.5rem;font-size:13px;color:#fff;background:#555;border-radius:3px;text-align:center}
.get{background:#2b6cb0}.post{background:#2f855a}.delete{background:#c53030}.put,.patch{background:#b7791f}.d,.auth{color:#555}`

/** The whole page; `errorShapes` says which error bodies the service answers. */
export function renderApiDocs(doc: Doc, errorShapes: ErrorShape[]): string {
  const operations = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op = item?.[method]
      return op ? [{ path, method, op }] : []
    }),
  )
  const schemes = Object.entries(doc.components?.securitySchemes ?? {}).map(([name, given]) => {
    const scheme = given as OpenAPIV3.SecuritySchemeObject
    const how =
      scheme.type === 'http'
        ? `HTTP ${scheme.scheme}${scheme.bearerFormat ? ` (${scheme.bearerFormat})` : ''}`
        : scheme.type === 'apiKey'
          ? `${scheme.in} ${scheme.name}`
          : scheme.type
    return html`<li><code>${name}</code>: ${how}${scheme.description ? html` — ${scheme.description}` : ''}</li>`
  })
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${doc.info.title} ${doc.info.version}: API reference</title><style>${new Html(STYLE)}</style></head>
<body><h1>${doc.info.title} <small>${doc.info.version}</small></h1>
${doc.info.description ? html`<p>${doc.info.description}</p>` : ''}
<p>The same reference as an OpenAPI 3.1 document: <a href="openapi.json">openapi.json</a>. ${operations.length} operations.</p>
<h2>Errors</h2>
<p>Every wrong request gets a 4XX (400 invalid request, 401 no or bad credentials, 403 refused, 404 not found, 405 method not allowed, 409 conflict, 413 too large, 415 unsupported media type, 429 too many requests) and changes nothing; 503 while a dependency is unavailable; ${errorShapes.map((s) => ERROR_SHAPES[s]).join('; ')}. Every response carries an X-Request-Id.</p>
${schemes.length ? html`<h2>Authentication</h2><ul>${schemes}</ul>` : ''}
<h2>Operations</h2>
<ul>${operations.map(({ path, method, op }) => html`<li><a href="#${anchor(method, path)}">${method.toUpperCase()} ${path}</a>${op.summary ? html` — ${op.summary}` : ''}</li>`)}</ul>
${operations.map(({ path, method, op }) => operation(doc, path, method, op))}
</body></html>
`
  return page.value
}
