import { randomBytes } from 'node:crypto'
import type { IdpDb } from '../../db.ts'
import { SCOPE_TOKEN } from '../../oauth/scopes.ts'
import {
  allResources,
  deleteResource,
  insertResource,
  resourceByIdentifier,
  type ResourceRow,
} from './store.ts'
import { idpError } from '../../errors.ts'

/** identity-provider.md, Resources: an absolute URI without query or fragment (RFC 8707 §2). */
export function checkIdentifier(identifier: string): string {
  let url: URL
  try {
    url = new URL(identifier)
  } catch {
    throw idpError('invalid_request', 'identifier must be an absolute URI')
  }
  if (url.search || url.hash || identifier.includes('#') || identifier.includes('?'))
    throw idpError('invalid_request', 'identifier must have no query and no fragment')
  return identifier
}

export async function registerResource(
  db: IdpDb,
  input: { identifier: string; name: string; scopes?: string[]; mcp?: boolean },
  organizationId: string | null = null,
) {
  const identifier = checkIdentifier(input.identifier)
  const scopes = [...new Set(input.scopes ?? [])]
  const bad = scopes.find((s) => !SCOPE_TOKEN.test(s))
  if (bad) throw idpError('invalid_request', `"${bad}" is not a scope token (RFC 6749 §3.3)`)
  if (await resourceByIdentifier(db, identifier))
    throw idpError('conflict', `a resource ${identifier} is already registered`)
  return present(
    await insertResource(db, {
      id: `res_${randomBytes(12).toString('base64url')}`,
      identifier,
      name: input.name,
      scopes,
      mcp: input.mcp ?? false,
      organization_id: organizationId,
    }),
  )
}

export const present = (row: ResourceRow) => ({
  id: row.id,
  identifier: row.identifier,
  name: row.name,
  scopes: row.scopes,
  mcp: row.mcp,
  created_at: row.created_at.toISOString(),
})

/** RFC 8707: the registered resource a token is asked for; unregistered is `invalid_target`. */
export async function targetResource(db: IdpDb, identifier: string | undefined) {
  if (identifier === undefined) return undefined
  const resource = await resourceByIdentifier(db, identifier)
  if (!resource) throw idpError('invalid_target', `no resource ${identifier} is registered`)
  return resource
}

/** RFC 9728 §2: what a client needs to know to get a token for the resource. */
export function protectedResourceMetadata(resource: ResourceRow, issuer: string) {
  return {
    resource: resource.identifier,
    authorization_servers: [issuer],
    resource_name: resource.name,
    ...(resource.scopes.length ? { scopes_supported: resource.scopes } : {}),
    bearer_methods_supported: ['header'],
  }
}

export type { ResourceRow } from './store.ts'

/** What other areas may ask of registered resources (in the caller's db or transaction). */
export const resourcesService = {
  byIdentifier: resourceByIdentifier,
  /** Every resource, or an organization's. */
  all: allResources,
  /** Deletes a resource (an organization's only, when given); false when there is none. */
  delete: deleteResource,
}
