import type { IdpDb } from '../../db.ts'
import { liveClients } from './store.ts'

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

/** What a client's home is made of: its registered URIs (RFC 7591 §2). */
export interface HomeParts {
  client_type: string
  client_uri: string | null
  redirect_uris: string[]
  post_logout_redirect_uris: string[]
}

/** The origin of a web URI a browser can open; a native app's (a private scheme, a public client's loopback) has none. */
function webOrigin(uri: string, publicClient: boolean): string | undefined {
  try {
    const url = new URL(uri)
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined
    if (publicClient && LOOPBACK.has(url.hostname)) return undefined
    return url.origin
  } catch {
    return undefined
  }
}

/**
 * Where a person goes back to a client: its `client_uri`, else the origin of its first web redirect
 * URI, else of its first post-logout redirect URI; nothing for a native app without a home page.
 * Only registered metadata is ever linked (no open redirect).
 */
export function homeOf(client: HomeParts): string | undefined {
  if (client.client_uri) return client.client_uri
  const publicClient = client.client_type === 'public'
  for (const uri of [...client.redirect_uris, ...client.post_logout_redirect_uris]) {
    const origin = webOrigin(uri, publicClient)
    if (origin) return origin
  }
  return undefined
}

/** A client as the pages name it: its name and where it lives. */
export interface AppHome {
  client_id: string
  name: string
  href: string
}

const HOME_COLUMNS = [
  'client_id',
  'client_name',
  'client_type',
  'client_uri',
  'redirect_uris',
  'post_logout_redirect_uris',
] as const

const toHome = (row: HomeParts & { client_id: string; client_name: string }): AppHome | undefined => {
  const href = homeOf(row)
  return href ? { client_id: row.client_id, name: row.client_name, href } : undefined
}

/** A live client's home, when it has one a browser can open. */
export async function clientHome(db: IdpDb, clientId: string): Promise<AppHome | undefined> {
  if (!clientId || clientId.length > 200) return undefined
  const row = await liveClients(db).select(HOME_COLUMNS).where('client_id', '=', clientId).executeTakeFirst()
  return row ? toHome(row) : undefined
}

/**
 * svc's console: the newest live first-party client with a `client_uri` (the rental registers its
 * console so), where a page leads when no application sent the person.
 */
export async function consoleHome(db: IdpDb): Promise<AppHome | undefined> {
  const row = await liveClients(db)
    .select(HOME_COLUMNS)
    .where('first_party', '=', true)
    .where('client_uri', 'is not', null)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row ? toHome(row) : undefined
}

/** A request as this module reads it: its query and form fields. */
interface FlowRequest {
  query: unknown
  body?: unknown
}

/**
 * The client a page's flow carries: `client_id` of the query or the form (the links in the
 * emails carry it), else the one of the authorization request `return_to` resumes.
 */
export function flowClientId(request: FlowRequest): string | undefined {
  for (const source of [request.query, request.body] as Array<Record<string, unknown> | undefined>) {
    if (!source || typeof source !== 'object') continue
    if (typeof source.client_id === 'string' && source.client_id) return source.client_id
    const returnTo = source.return_to
    if (typeof returnTo === 'string' && returnTo.startsWith('/authorize?')) {
      const clientId = new URLSearchParams(returnTo.slice('/authorize?'.length)).get('client_id')
      if (clientId) return clientId
    }
  }
  return undefined
}

/** Where an end page leads on: the application that sent the person (`sent`), else svc's console. */
export interface OnwardApp {
  app: AppHome
  sent: boolean
}

/** The application a page leads back to: the flow's client (or `clientId`), else the console; undefined: neither. */
export async function onwardOf(
  db: IdpDb,
  request: FlowRequest,
  clientId = flowClientId(request),
): Promise<OnwardApp | undefined> {
  const sentBy = clientId ? await clientHome(db, clientId) : undefined
  if (sentBy) return { app: sentBy, sent: true }
  const console = await consoleHome(db)
  return console ? { app: console, sent: false } : undefined
}
