import { getFromPublicUrl } from '@svc/kit/http/public-fetch'
import { type Agent, request } from 'undici'

/** What a tool server says about itself as an OAuth protected resource (RFC 9728 §2). */
export interface ResourceMetadata {
  resource: string
  authorization_servers: string[]
  scopes_supported: string[]
  /** Where the metadata was read. */
  metadata_url: string
}

const MAX_METADATA_BYTES = 64 * 1024
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'svc-rental', version: '0.1.0' },
  },
})

/** RFC 9728 §5.1: the `resource_metadata` parameter of a Bearer challenge, if there is one. */
export function resourceMetadataParam(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header.join(', ') : (header ?? '')
  const bearer = /(?:^|,)\s*Bearer\s+(.*)$/i.exec(value)?.[1] ?? ''
  return /(?:^|[\s,])resource_metadata\s*=\s*"([^"]*)"/i.exec(bearer)?.[1]
}

/** RFC 9728 §3.1: the well-known URL is the resource's path after `/.well-known/oauth-protected-resource`. */
export function wellKnownUrls(url: string): string[] {
  const target = new URL(url)
  const path = target.pathname.replace(/\/+$/, '')
  const base = `${target.origin}/.well-known/oauth-protected-resource`
  return path ? [`${base}${path}`, base] : [base]
}

/**
 * A protected resource's identifier covers the MCP URL when it is that URL, or its origin or a
 * path prefix of it on a segment boundary (a server may name itself by its origin).
 */
export function covers(resource: string, url: string): boolean {
  let r: URL
  let u: URL
  try {
    r = new URL(resource)
    u = new URL(url)
  } catch {
    return false
  }
  if (r.search || r.hash || r.origin !== u.origin) return false
  const prefix = r.pathname.replace(/\/+$/, '')
  const path = u.pathname.replace(/\/+$/, '')
  return path === prefix || path.startsWith(`${prefix}/`)
}

/**
 * Finds the tool server's RFC 9728 metadata: the `resource_metadata` its 401 names (an MCP
 * initialize sent without a token), else its well-known URLs. The metadata is read over the kit's
 * public fetch rules (https and public addresses outside development, no redirect followed), its
 * `resource` must cover the server's URL and `authorization_servers` must be a list. Throws an
 * `Error` naming what is wrong.
 */
export async function discoverResource(
  url: string,
  options: {
    serverAgent: Agent
    metadataAgent: Agent
    allowPrivate: boolean
    timeoutMs: number
    /** Checks a metadata URL before it is fetched (the engagement's egress policy); throws to refuse. */
    admit?: (url: string) => Promise<unknown>
  },
): Promise<ResourceMetadata> {
  let named: string | undefined
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: INITIALIZE,
      dispatcher: options.serverAgent,
      signal: AbortSignal.timeout(options.timeoutMs),
    })
    await res.body.dump({ limit: MAX_METADATA_BYTES }).catch(() => undefined)
    if (res.statusCode === 401) named = resourceMetadataParam(res.headers['www-authenticate'])
  } catch (err) {
    const e = err as Error
    throw new Error(
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? `did not answer within ${options.timeoutMs} ms`
        : `could not be reached: ${(e.cause as Error | undefined)?.message ?? e.message}`,
    )
  }
  const candidates = named ? [named] : wellKnownUrls(url)
  let last = ''
  for (const candidate of candidates) {
    let answer: { status: number; text: string; url: string }
    await options.admit?.(candidate)
    try {
      answer = await getFromPublicUrl(candidate, {
        agent: options.metadataAgent,
        allowPrivate: options.allowPrivate,
        timeoutMs: options.timeoutMs,
        maxBytes: MAX_METADATA_BYTES,
        headers: { accept: 'application/json' },
      })
    } catch (err) {
      last = `its metadata ${candidate} ${(err as Error).message}`
      continue
    }
    if (answer.status !== 200) {
      last = `its metadata ${candidate} answered ${answer.status}`
      continue
    }
    return parseMetadata(answer.text, url, candidate)
  }
  throw new Error(
    `publishes no protected-resource metadata (RFC 9728)${last ? `: ${last}` : ''}; bind it with an API key instead`,
  )
}

function parseMetadata(text: string, url: string, from: string): ResourceMetadata {
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new Error(`its metadata ${from} is not JSON`)
  }
  const resource = body.resource
  const servers = body.authorization_servers
  if (typeof resource !== 'string') throw new Error(`its metadata ${from} names no resource`)
  if (!covers(resource, url))
    throw new Error(`its metadata names the resource ${resource.slice(0, 200)}, which is not ${url}`)
  if (!Array.isArray(servers) || servers.length === 0 || !servers.every((s) => typeof s === 'string'))
    throw new Error(`its metadata ${from} names no authorization_servers`)
  const scopes = Array.isArray(body.scopes_supported)
    ? body.scopes_supported.filter((s): s is string => typeof s === 'string')
    : []
  return { resource, authorization_servers: servers, scopes_supported: scopes, metadata_url: from }
}
