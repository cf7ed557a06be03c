import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Recorder } from './service.ts'
import { profileRow, updateProfile } from './store.ts'
import type { Membership } from '../../http/index.ts'

export interface ProfilePatch {
  display_name?: string | null | undefined
  locale?: 'en' | 'ar' | null | undefined
  notifications?: Record<string, boolean> | undefined
}

const profileOf = (row: {
  id: string
  email: string | null
  role: string
  display_name: string | null
  locale: 'en' | 'ar' | null
  notifications: unknown
}) => ({
  member_id: row.id,
  email: row.email,
  role: row.role,
  display_name: row.display_name,
  locale: row.locale,
  notifications: (row.notifications ?? {}) as Record<string, boolean>,
})

/** The member's own profile as it stands (GET /v1/users/me). */
export async function profile(db: RentalDb, actor: Membership) {
  const row = await profileRow(db, actor.orgId, actor.memberId)
  if (!row) throw rentalError('member_not_found', 'no member profile: the caller is no member')
  return profileOf(row)
}

/** The member's own profile: display name, language, notification choices (merged into those kept). */
export async function setProfile(db: RentalDb, by: Recorder, actor: Membership, patch: ProfilePatch) {
  if (patch.display_name === undefined && patch.locale === undefined && patch.notifications === undefined)
    throw rentalError('invalid_request', 'give display_name, locale or notifications: the change is empty')
  return inTransaction(db, async (trx) => {
    const row = await profileRow(trx, actor.orgId, actor.memberId, true)
    if (!row) throw rentalError('member_not_found', 'you are no longer a member of the organization')
    const notifications = {
      ...(row.notifications as Record<string, boolean>),
      ...(patch.notifications ?? {}),
    }
    const changed = await updateProfile(trx, row.id, {
      ...(patch.display_name !== undefined ? { display_name: patch.display_name } : {}),
      ...(patch.locale !== undefined ? { locale: patch.locale } : {}),
      notifications: JSON.stringify(notifications),
    })
    await by.events.record(trx, {
      orgId: actor.orgId,
      type: 'member.profile_changed',
      subjects: { member_id: row.id },
      actor: by.actor,
      data: { fields: Object.keys(patch).filter((k) => patch[k as keyof ProfilePatch] !== undefined) },
    })
    return profileOf(changed)
  })
}
