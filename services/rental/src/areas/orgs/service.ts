import { randomBytes } from 'node:crypto'
import { type Page } from '@svc/kit'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor, EventService } from '../events/index.ts'
import {
  deleteMember,
  emailTaken,
  insertMember,
  insertOrg,
  invitationFor,
  joinInvitation,
  lockOrg,
  memberOf,
  membersOf,
  membershipBySubject,
  ownersOf,
  roleExists,
  setRole,
} from './store.ts'
import type { EventType } from '../events/index.ts'
import { type Membership, refuse } from '../../http/index.ts'

/** Who records a member change: the events area and the change's actor. */
export interface Recorder {
  events: EventService
  actor: Actor
}

/** A member change, as an event of the organization (no stream). */
const memberEvent = (
  by: Recorder,
  trx: RentalDb,
  orgId: string,
  memberId: string,
  type: EventType,
  data: Record<string, unknown>,
) => by.events.record(trx, { orgId, type, subjects: { member_id: memberId }, actor: by.actor, data })

export interface SignedIn {
  subject: string
  email: string | null
  emailVerified: boolean
}

const newId = (prefix: string) => `${prefix}${randomBytes(12).toString('base64url')}`

type MemberRow = NonNullable<Awaited<ReturnType<typeof memberOf>>>

const view = (row: MemberRow) => ({
  id: row.id,
  subject: row.subject,
  email: row.email,
  role: row.role,
  state: row.subject === null ? ('invited' as const) : ('joined' as const),
  invited_by: row.invited_by,
  created_at: row.created_at.toISOString(),
  joined_at: row.joined_at?.toISOString() ?? null,
})

export const asMembership = (row: {
  id: string
  org_id: string
  role: string
  locale: 'en' | 'ar' | null
  permissions: string[]
}): Membership => ({
  memberId: row.id,
  orgId: row.org_id,
  role: row.role,
  locale: row.locale,
  permissions: row.permissions,
})

const isUniqueViolation = (err: unknown) => (err as { code?: string }).code === '23505'

/**
 * The client's membership, made at its first sign-in: the invitation waiting for its email if
 * the idp says that email is verified, else a new organization with the client as its `owner`.
 */
export async function ensureMembership(
  db: RentalDb,
  events: EventService,
  who: SignedIn,
  now: Date,
): Promise<Membership> {
  const by: Recorder = { events, actor: { type: 'user', id: who.subject } }
  const found = await membershipBySubject(db, who.subject)
  if (found) return asMembership(found)
  try {
    await inTransaction(db, async (trx) => {
      const invitation = who.emailVerified && who.email ? await invitationFor(trx, who.email) : undefined
      if (invitation) {
        await joinInvitation(trx, invitation.id, who.subject, now)
        await memberEvent(by, trx, invitation.org_id, invitation.id, 'member.joined', {
          role: invitation.role,
          invited: true,
        })
        return
      }
      const orgId = newId('org_')
      const memberId = newId('mem_')
      await insertOrg(trx, {
        id: orgId,
        name: who.email ? `${who.email}'s organization` : 'Organization',
        // the email isolated (U+2068…U+2069) so it keeps its own direction inside the Arabic
        name_ar: who.email ? `مؤسسة \u2068${who.email}\u2069` : 'المؤسسة',
      })
      await memberEvent(by, trx, orgId, memberId, 'member.joined', { role: 'owner', invited: false })
      await insertMember(trx, {
        id: memberId,
        org_id: orgId,
        subject: who.subject,
        email: who.email,
        role: 'owner',
        invited_by: null,
        joined_at: now,
      })
    })
  } catch (err) {
    // another request of the same client made it first
    if (!isUniqueViolation(err)) throw err
  }
  return asMembership((await membershipBySubject(db, who.subject))!)
}

export async function memberList(db: RentalDb, orgId: string, page: Page) {
  return { members: (await membersOf(db, orgId, page.limit, page.offset)).map(view) }
}

const memberNotFound = (id: string) => rentalError('member_not_found', `no member ${id} in your organization`)

async function checkRole(db: RentalDb, actor: Membership, role: string) {
  if (!(await roleExists(db, actor.orgId, role)))
    throw rentalError('role_not_found', `no role named ${role} in your organization`)
  if (role === 'owner' && !actor.permissions.includes('members:owners')) throw refuse('members:owners')
}

/** An invitation by email: the invitee joins at its next sign-in with that email, verified at the idp. */
export async function invite(
  db: RentalDb,
  by: Recorder,
  actor: Membership,
  input: { email: string; role: string },
) {
  await checkRole(db, actor, input.role)
  return inTransaction(db, async (trx) => {
    await lockOrg(trx, actor.orgId)
    if (await emailTaken(trx, actor.orgId, input.email))
      throw rentalError('already_member', `${input.email} is already invited or a member`)
    try {
      const row = await insertMember(trx, {
        id: newId('mem_'),
        org_id: actor.orgId,
        subject: null,
        email: input.email,
        role: input.role,
        invited_by: actor.memberId,
        joined_at: null,
      })
      await memberEvent(by, trx, actor.orgId, row.id, 'member.invited', {
        email: input.email,
        role: input.role,
      })
      return view(row)
    } catch (err) {
      if (isUniqueViolation(err))
        throw rentalError('already_member', `${input.email} is already invited or a member`)
      throw err
    }
  })
}

/** Takes the last owner's role away, or removes them: refused (409), an organization keeps an owner. */
async function keepAnOwner(trx: RentalDb, row: MemberRow) {
  if (row.role !== 'owner' || row.subject === null) return
  const owners = await ownersOf(trx, row.org_id)
  if (owners.length <= 1)
    throw rentalError(
      'last_owner',
      'the organization’s last owner cannot be removed or demoted: make another owner first',
    )
}

export async function removeMember(db: RentalDb, by: Recorder, actor: Membership, id: string) {
  return inTransaction(db, async (trx) => {
    await lockOrg(trx, actor.orgId)
    const row = await memberOf(trx, actor.orgId, id, true)
    if (!row) throw memberNotFound(id)
    if (row.role === 'owner' && !actor.permissions.includes('members:owners')) throw refuse('members:owners')
    await keepAnOwner(trx, row)
    await deleteMember(trx, row.id)
    await memberEvent(by, trx, actor.orgId, row.id, 'member.removed', {
      role: row.role,
      email: row.email,
      subject: row.subject,
    })
    return { removed: view(row), subject: row.subject }
  })
}

export async function changeRole(db: RentalDb, by: Recorder, actor: Membership, id: string, role: string) {
  return inTransaction(db, async (trx) => {
    await lockOrg(trx, actor.orgId)
    const row = await memberOf(trx, actor.orgId, id, true)
    if (!row) throw memberNotFound(id)
    await checkRole(trx, actor, role)
    if (row.role === 'owner' && !actor.permissions.includes('members:owners')) throw refuse('members:owners')
    if (role !== 'owner') await keepAnOwner(trx, row)
    const changed = await setRole(trx, row.id, role)
    if (row.role !== role)
      await memberEvent(by, trx, actor.orgId, row.id, 'member.role_changed', { from: row.role, to: role })
    return view(changed)
  })
}
