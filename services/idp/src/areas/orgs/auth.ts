import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { challenge } from '../../oauth/challenge.ts'
import { keyHash, KEY_PREFIX } from './service.ts'
import { type OrgRow, orgByKeyHash } from './store.ts'
import { idpError } from '../../errors.ts'

/**
 * The organization behind `Authorization: Bearer svc_org_…`. The key is found by its SHA-256, so
 * no stored value is ever compared with what was sent. A disabled organization is refused.
 */
async function requireOrg(db: IdpDb, request: FastifyRequest): Promise<OrgRow> {
  const header = request.headers.authorization ?? ''
  const refuse = (message: string) =>
    idpError('invalid_token', message, {
      'www-authenticate': challenge('Bearer', { error: 'invalid_token', error_description: message }),
    })
  // RFC 6750 §3.1: no credential at all, no error code in the challenge
  if (!header.trim())
    throw idpError('invalid_token', 'an organization API key is required', {
      'www-authenticate': challenge('Bearer', { realm: 'organizations' }),
    })
  if (!header.startsWith(`Bearer ${KEY_PREFIX}`)) throw refuse('an organization API key is required')
  const org = await orgByKeyHash(db, keyHash(header.slice('Bearer '.length)))
  if (!org) throw refuse('the organization API key is not valid')
  if (org.disabled_at) throw idpError('access_denied', 'the organization is disabled')
  return org
}

const authenticated = new WeakMap<FastifyRequest, OrgRow>()

/**
 * Route options for every route behind the organization key: the key is checked in `onRequest`,
 * before the body is parsed or validated, so a caller without it learns nothing about the schema.
 */
export const orgKey = (db: IdpDb) => ({
  onRequest: async (request: FastifyRequest) => {
    authenticated.set(request, await requireOrg(db, request))
  },
})

/** The organization `orgKey` authenticated for this request. */
export function orgOf(request: FastifyRequest): OrgRow {
  const org = authenticated.get(request)
  if (!org) throw new Error(`${request.routeOptions.url} is missing the orgKey hook`)
  return org
}
