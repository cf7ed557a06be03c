import { createHash, randomBytes } from 'node:crypto'
import { notFound, type Sealer } from '@svc/kit'
import type { IdpDb } from '../../db.ts'
import { forgetClients } from '../clients/index.ts'
import { newDidKey } from '../identity/index.ts'
import { insertOrg, listOrgs, orgById, type OrgRow, updateOrg } from './store.ts'
import { idpError } from '../../errors.ts'
import { deleteMembershipsOf } from './members-store.ts'

export const KEY_PREFIX = 'svc_org_'
export const keyHash = (key: string) => createHash('sha256').update(key, 'utf8').digest()
const newKey = () => `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`

/** What an organization is told about itself (GET /orgs/me) and the admin about each one. */
export const orgView = (row: OrgRow) => ({
  organization_id: row.id,
  name: row.name,
  contact_email: row.contact_email,
  did: row.did,
  domain: row.domain,
  domain_verified: row.domain_verified,
  agent_deny_list: row.agent_deny_list,
  require_member_mfa: row.require_member_mfa,
  max_clients: row.max_clients,
  token_rate_limit_per_min: row.token_rate_limit_per_min,
  disabled: row.disabled_at !== null,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

/** An organization signs up: its API key is shown in this answer only and kept as a SHA-256. */
export async function signUp(
  db: IdpDb,
  sealer: Sealer,
  input: { name: string; contact_email: string; accept_terms: boolean },
) {
  if (input.accept_terms !== true) throw idpError('invalid_request', 'accept_terms must be true to sign up')
  const id = `org_${randomBytes(12).toString('base64url')}`
  const apiKey = newKey()
  const { did, key_sealed } = newDidKey(sealer, `org-key:${id}`)
  const row = await insertOrg(db, {
    id,
    name: input.name,
    contact_email: input.contact_email,
    api_key_hash: keyHash(apiKey),
    did,
    key_sealed,
  })
  return { organization_id: row.id, name: row.name, api_key: apiKey }
}

/** A new key; the old one stops working at once. */
export async function rotateKey(db: IdpDb, org: OrgRow) {
  const apiKey = newKey()
  await updateOrg(db, org.id, { api_key_hash: keyHash(apiKey) })
  return { organization_id: org.id, api_key: apiKey }
}

export interface OrgChanges {
  name?: string
  contact_email?: string
  agent_deny_list?: string[]
  require_member_mfa?: boolean
}

export async function changeOrg(db: IdpDb, org: OrgRow, changes: OrgChanges) {
  const set = {
    ...changes,
    ...(changes.agent_deny_list ? { agent_deny_list: [...new Set(changes.agent_deny_list)] } : {}),
  }
  return orgView((await updateOrg(db, org.id, set))!)
}

// the admin's side
export async function allOrgs(db: IdpDb) {
  return (await listOrgs(db)).map(orgView)
}

export async function adminUpdate(
  db: IdpDb,
  id: string,
  set: { disabled_at?: Date | null; max_clients?: number; token_rate_limit_per_min?: number },
) {
  const row = await updateOrg(db, id, set)
  if (!row) throw notFound(`no organization ${id}`, 'not_found')
  // a disabled organization's clients are unknown: no kept row may still let them in
  forgetClients()
  return orgView(row)
}

export type { OrgRow } from './store.ts'

/** What other areas may ask of organizations (in the caller's db or transaction). */
export const orgsService = {
  byId: orgById,
  forgetMember: deleteMembershipsOf,
}
