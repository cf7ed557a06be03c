import type { RentalDb } from '../../db.ts'
import type { Actor, EventService } from '../events/index.ts'
import { deleteMember, lockOrg, memberBySubject, ownersOf, setEmailOfSubject } from './store.ts'

export { memberBySubject }

export type LeaveOutcome = 'removed' | 'kept_last_owner' | 'not_member'

/**
 * The idp deleted the user: the member leaves its organization, recorded as `member.removed`
 * by the system. The last owner is kept (an organization keeps an owner; erasing the client is
 * its own act), and the caller records that it was kept.
 */
export async function leaveByIdentity(
  trx: RentalDb,
  events: EventService,
  actor: Actor,
  subject: string,
): Promise<{ outcome: LeaveOutcome; orgId: string | null; memberId: string | null }> {
  const found = await memberBySubject(trx, subject)
  if (!found) return { outcome: 'not_member', orgId: null, memberId: null }
  await lockOrg(trx, found.org_id)
  if (found.role === 'owner' && (await ownersOf(trx, found.org_id)).length <= 1)
    return { outcome: 'kept_last_owner', orgId: found.org_id, memberId: found.id }
  await deleteMember(trx, found.id)
  await events.record(trx, {
    orgId: found.org_id,
    type: 'member.removed',
    subjects: { member_id: found.id },
    actor,
    data: { role: found.role, email: found.email, subject, reason: 'user.deleted' },
  })
  return { outcome: 'removed', orgId: found.org_id, memberId: found.id }
}

/** The idp changed the user's email: the member's email follows. */
export const changeEmailByIdentity = (trx: RentalDb, subject: string, email: string) =>
  setEmailOfSubject(trx, subject, email)
