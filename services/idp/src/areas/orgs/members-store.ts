import type { IdpDb, IdpTables } from '../../db.ts'

type Role = IdpTables['org_members']['role']

export async function insertInvite(
  db: IdpDb,
  row: { token_hash: Buffer; organization_id: string; email: string; role: Role; expires_at: Date },
) {
  await db.insertInto('org_invites').values(row).execute()
}

/** A live invitation with its organization's name, by the hash of its link token. */
export async function liveInvite(db: IdpDb, tokenHash: Buffer) {
  return db
    .selectFrom('org_invites')
    .innerJoin('organizations', 'organizations.id', 'org_invites.organization_id')
    .selectAll('org_invites')
    .select('organizations.name as organization_name')
    .where('org_invites.token_hash', '=', tokenHash)
    .where('org_invites.accepted_at', 'is', null)
    .where('org_invites.expires_at', '>', new Date())
    .where('organizations.disabled_at', 'is', null)
    .executeTakeFirst()
}

/** Accepts an invitation once: false when it was accepted meanwhile. */
export async function acceptInvite(db: IdpDb, tokenHash: Buffer, userId: string) {
  const accepted = await db
    .updateTable('org_invites')
    .set({ accepted_at: new Date(), accepted_by: userId })
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .executeTakeFirst()
  return accepted.numUpdatedRows > 0n
}

export async function saveMember(db: IdpDb, organizationId: string, userId: string, role: Role) {
  await db
    .insertInto('org_members')
    .values({ organization_id: organizationId, user_id: userId, role })
    .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doUpdateSet({ role }))
    .execute()
}

export async function membersOf(db: IdpDb, organizationId: string) {
  return db
    .selectFrom('org_members')
    .select(['user_id', 'role', 'created_at'])
    .where('organization_id', '=', organizationId)
    .orderBy('created_at')
    .execute()
}

export async function membership(db: IdpDb, organizationId: string, userId: string) {
  return db
    .selectFrom('org_members')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

export async function deleteMember(db: IdpDb, organizationId: string, userId: string) {
  const deleted = await db
    .deleteFrom('org_members')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst()
  return deleted.numDeletedRows > 0n
}

/** Every membership of the account (it is being deleted). */
export async function deleteMembershipsOf(db: IdpDb, userId: string) {
  await db.deleteFrom('org_members').where('user_id', '=', userId).execute()
}
