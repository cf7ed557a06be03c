import { createHash, randomBytes } from 'node:crypto'
import { notFound } from '@svc/kit'
import { type IdpDb, inTransaction } from '../../db.ts'
import { subjectFor } from '../../oauth/subject.ts'
import type { AccountsService } from '../accounts/index.ts'
import type { Mailer } from '../email/mailer.ts'
import {
  acceptInvite,
  deleteMember,
  insertInvite,
  liveInvite,
  membersOf,
  membership,
  saveMember,
} from './members-store.ts'
import { type OrgRow, orgById } from './store.ts'
import { idpError } from '../../errors.ts'

const INVITE_TTL_MS = 7 * 86_400_000
const digest = (token: string) => createHash('sha256').update(token).digest()
type Role = 'admin' | 'member'

export interface MemberDeps {
  db: IdpDb
  mailer: Mailer
  issuer: string
  pairwiseSalt: string
  accounts: AccountsService
}

/**
 * A member is known to its organization by the same pairwise `sub` the organization's clients
 * see, never by the account's global id.
 */
const memberSub = (deps: MemberDeps, org: OrgRow, userId: string) =>
  subjectFor(
    { subject_type: 'pairwise', redirect_uris: [], organization_id: org.id },
    userId,
    deps.pairwiseSalt,
  )

/** Invites an address: the link goes by email, works once, for seven days. */
export async function invite(deps: MemberDeps, org: OrgRow, email: string, role: Role) {
  const token = randomBytes(32).toString('base64url')
  const expiresAt = new Date(Date.now() + INVITE_TTL_MS)
  await inTransaction(deps.db, async (trx) => {
    await insertInvite(trx, {
      token_hash: digest(token),
      organization_id: org.id,
      email: email.toLowerCase(),
      role,
      expires_at: expiresAt,
    })
    await deps.mailer.send(trx, {
      to: email,
      subject: `Join ${org.name}`,
      text: `${org.name} invites you to join as ${role}: ${deps.issuer}/ui/orgs/accept?token=${token}\nThe link works once, for seven days.`,
    })
  })
  return { email: email.toLowerCase(), role, expires_at: expiresAt.toISOString() }
}

export async function members(deps: MemberDeps, org: OrgRow) {
  const rows = await membersOf(deps.db, org.id)
  const accounts = new Map(
    (
      await deps.accounts.namesOf(
        deps.db,
        rows.map((m) => m.user_id),
      )
    ).map((a) => [a.id, a]),
  )
  return rows.flatMap((m) => {
    const account = accounts.get(m.user_id)
    if (!account) return []
    return [
      {
        user_id: memberSub(deps, org, m.user_id),
        email: account.email,
        ...(account.name ? { name: account.name } : {}),
        role: m.role,
        joined_at: m.created_at.toISOString(),
      },
    ]
  })
}

export async function removeMember(deps: MemberDeps, org: OrgRow, memberId: string) {
  const member = (await membersOf(deps.db, org.id)).find((m) => memberSub(deps, org, m.user_id) === memberId)
  if (!member || !(await deleteMember(deps.db, org.id, member.user_id)))
    throw notFound('no such member in this organization', 'not_found')
}

/** The invitation behind a link, while it can be accepted. */
export const invitation = (db: IdpDb, token: string) => liveInvite(db, digest(token))

/** The signed-in account accepts: only the invited address may, and only once. */
export async function accept(db: IdpDb, token: string, user: { id: string; email: string }) {
  return inTransaction(db, async (trx) => {
    const found = await liveInvite(trx, digest(token))
    if (!found) throw idpError('invalid_request', 'this invitation has expired or was already used')
    if (found.email !== user.email.toLowerCase())
      throw idpError('access_denied', 'this invitation was sent to another address')
    if (!(await acceptInvite(trx, digest(token), user.id)))
      throw idpError('invalid_request', 'this invitation was already used')
    await saveMember(trx, found.organization_id, user.id, found.role)
    return found
  })
}

/**
 * The `org` claim (scope organization): the client's own organization and the user's role in it,
 * `domain` once verified; nothing for a platform client or a user who is not a member.
 */
export async function orgClaim(db: IdpDb, client: { organization_id: string | null }, userId: string) {
  if (!client.organization_id) return undefined
  const org = await orgById(db, client.organization_id)
  const member = org ? await membership(db, org.id, userId) : undefined
  if (!org || !member) return undefined
  return {
    id: org.id,
    name: org.name,
    role: member.role,
    ...(org.domain && org.domain_verified ? { domain: org.domain } : {}),
  }
}

/** identity-provider.md, Organization: with `require_member_mfa`, members sign in with a second factor for its clients. */
export async function memberNeedsMfa(db: IdpDb, client: { organization_id: string | null }, userId: string) {
  if (!client.organization_id) return false
  const org = await orgById(db, client.organization_id)
  return Boolean(org?.require_member_mfa && (await membership(db, org.id, userId)))
}
