import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Membership, refuse } from './permissions.ts'
import type { Recorder } from './service.ts'

/** The permission that makes an owner an owner: a role in use never loses it (PUT /v1/roles). */
export const OWNER_PERMISSION = 'members:owners'

export interface RoleView {
  name: string
  description: string
  permissions: string[]
  builtin: boolean
  /** How many members and invitations hold it. */
  members: number
}

export async function roleList(db: RentalDb, orgId: string): Promise<RoleView[]> {
  const rows = await db
    .selectFrom('rental_roles as r')
    .select(['r.name', 'r.description', 'r.permissions', 'r.builtin'])
    .select((eb) =>
      eb
        .selectFrom('org_members as m')
        .whereRef('m.role', '=', 'r.name')
        .where('m.org_id', '=', orgId)
        .select((c) => c.fn.countAll<number>().as('n'))
        .as('members'),
    )
    .orderBy('r.builtin', 'desc')
    .orderBy('r.name')
    .execute()
  return rows.map((r) => ({ ...r, members: Number(r.members ?? 0) }))
}

/**
 * Makes or changes a custom role: a named set of existing permissions, each one the setter's role
 * holds (no one grants what they lack). Built-in roles do not change (409 `role_builtin`); a role
 * members hold keeps `members:owners` if it has it (409 `role_in_use`): an owner stays an owner.
 * Roles are shared by the platform's organizations (rental_roles has no organization), so a custom
 * role's name is taken once; a role another organization's members hold is changed by none else.
 */
export async function putRole(
  db: RentalDb,
  by: Recorder,
  actor: Membership,
  input: { name: string; permissions: string[]; description?: string | undefined },
) {
  const permissions = [...new Set(input.permissions)].sort()
  const beyond = permissions.find((p) => !actor.permissions.includes(p))
  if (beyond) throw refuse(beyond)
  return inTransaction(db, async (trx) => {
    const found = await trx
      .selectFrom('rental_roles')
      .selectAll()
      .where('name', '=', input.name)
      .forUpdate()
      .executeTakeFirst()
    if (found?.builtin)
      throw rentalError('role_builtin', `${input.name} is a built-in role: built-in roles do not change`)
    const holders = await trx
      .selectFrom('org_members')
      .select(['org_id'])
      .where('role', '=', input.name)
      .execute()
    if (holders.some((h) => h.org_id !== actor.orgId))
      throw rentalError('role_taken', `the role ${input.name} is another organization’s: choose another name`)
    if (found && holders.length > 0 && found.permissions.includes(OWNER_PERMISSION))
      if (!permissions.includes(OWNER_PERMISSION))
        throw rentalError(
          'role_in_use',
          `the role ${input.name} is held by ${holders.length} member(s) and cannot lose ${OWNER_PERMISSION}`,
        )
    const description = input.description ?? found?.description ?? `custom role ${input.name}`
    await trx
      .insertInto('rental_roles')
      .values({ name: input.name, permissions, description, builtin: false })
      .onConflict((oc) => oc.column('name').doUpdateSet({ permissions, description }))
      .execute()
    await by.events.record(trx, {
      orgId: actor.orgId,
      type: 'role.saved',
      subjects: { role: input.name },
      actor: by.actor,
      data: { permissions, previous: found?.permissions ?? null },
    })
    return {
      name: input.name,
      description,
      permissions,
      builtin: false,
      members: holders.length,
      created: !found,
    }
  })
}
