import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoRoot } from '../../paths.ts'
import type { Schema } from './values.ts'

export interface Parameter {
  name: string
  in: 'path' | 'query' | 'header' | 'cookie'
  required?: boolean
  schema?: Schema
}

export interface Operation {
  method: string
  /** The OpenAPI path template, `/api/tokens/{id}`. */
  path: string
  parameters: Parameter[]
  /** Content type to schema, as the document lists them. */
  bodies: Record<string, Schema | undefined>
  /** The security schemes the document names (any one set of them suffices). */
  security: string[][]
  /** The Auth column of endpoints.tsv when the spec lists the route, else derived (see authOf). */
  auth: string
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Record<string, unknown>>>
  security?: Array<Record<string, string[]>>
  components?: { securitySchemes?: Record<string, unknown> }
}

export const key = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`

/**
 * The Auth column of the spec's endpoints.tsv for one service: `METHOD /path/{}` to its class, and
 * the path prefixes that a section heading names (`Management (\`/manage/v1\`, …)`) with the class
 * most of that section's rows have, for routes the spec does not list one by one.
 */
export interface SpecAuth {
  rows: Map<string, string>
  prefixes: Array<{ prefix: string; auth: string }>
  source: string
}

export function readSpecAuth(service: string): SpecAuth | undefined {
  // the specifications' table of endpoints, copied beside this file (SVC_SPEC_ENDPOINTS: another copy)
  const file =
    process.env.SVC_SPEC_ENDPOINTS ?? join(repoRoot(), 'packages/kit/src/testing/sweep/endpoints.tsv')
  if (!existsSync(file)) return undefined
  const rows = new Map<string, string>()
  const sections = new Map<string, string[]>()
  for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
    const [svc, method, path, auth, section = ''] = line.split('\t')
    if (svc !== service || !method || !path || !auth) continue
    rows.set(key(method, path), auth.replace(/\s*\(.*\)$/, ''))
    sections.set(section, [...(sections.get(section) ?? []), auth])
  }
  const prefixes: SpecAuth['prefixes'] = []
  for (const [section, auths] of sections) {
    const prefix = /\(`(\/[^`]+)`/.exec(section)?.[1]
    if (!prefix) continue
    const counts = new Map<string, number>()
    for (const a of auths) counts.set(a, (counts.get(a) ?? 0) + 1)
    const [auth] = [...counts].sort((a, b) => b[1] - a[1])[0]!
    prefixes.push({ prefix, auth })
  }
  return { rows, prefixes, source: file }
}

/** Security scheme names mapped to the spec's Auth classes, for routes the spec does not list. */
const SCHEME_CLASS: Record<string, string> = {
  consoleSession: 'S',
  csrfToken: 'C',
  organizationKey: 'O',
}

function authOf(method: string, path: string, security: string[][], spec: SpecAuth | undefined): string {
  const row = spec?.rows.get(key(method, path))
  if (row) return row
  const under = spec?.prefixes.find((p) => path === p.prefix || path.startsWith(`${p.prefix}/`))
  if (under) return under.auth
  if (security.length === 0) return 'P'
  const first = security[0]!
  if (first.includes('consoleSession')) return first.includes('csrfToken') ? 'S+C' : 'S'
  return first.map((s) => SCHEME_CLASS[s] ?? s).join('+')
}

/** Every operation of an OpenAPI document, with its parameters, bodies, security and Auth class. */
export function operationsOf(document: OpenApiDocument, spec: SpecAuth | undefined): Operation[] {
  const ops: Operation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      const op = raw as {
        parameters?: Parameter[]
        requestBody?: { content?: Record<string, { schema?: Schema }> }
        security?: Array<Record<string, string[]>>
      }
      const security = (op.security ?? document.security ?? []).map((s) => Object.keys(s))
      const bodies: Record<string, Schema | undefined> = {}
      for (const [type, content] of Object.entries(op.requestBody?.content ?? {}))
        bodies[type] = content.schema
      ops.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        bodies,
        security,
        auth: authOf(method, path, security, spec),
      })
    }
  }
  return ops
}

/** Reads a service's OpenAPI document and its operations. */
export async function fetchOperations(baseUrl: string, service: string) {
  const res = await fetch(`${baseUrl}/openapi.json`)
  if (!res.ok) throw new Error(`${baseUrl}/openapi.json answered ${res.status}`)
  const document = (await res.json()) as OpenApiDocument
  const spec = readSpecAuth(service)
  return { document, spec, operations: operationsOf(document, spec) }
}
