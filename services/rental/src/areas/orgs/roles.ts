import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type Membership, refuse } from './permissions.ts'
import { lockOrg } from './store.ts'
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

/** The built-in roles and the organization's own custom ones (another organization's are not listed). */
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
    .where((eb) => eb.or([eb('r.org_id', 'is', null), eb('r.org_id', '=', orgId)]))
    .orderBy('r.builtin', 'desc')
    .orderBy('r.name')
    .execute()
  return rows.map((r) => ({ ...r, members: Number(r.members ?? 0) }))
}

/**
 * Makes or changes a custom role: a named set of existing permissions, each one the setter's role
 * holds (no one grants what they lack). Built-in roles do not change (409 `role_builtin`); a role
 * members hold keeps `members:owners` if it has it (409 `role_in_use`): an owner stays an owner.
 * A custom role is its organization's (migration 0048): another organization's role of the same
 * name is neither seen nor changed here, and two organizations may each have one.
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
    // the organization's lock: two saves of a new name make one row
    await lockOrg(trx, actor.orgId)
    const found = await trx
      .selectFrom('rental_roles')
      .selectAll()
      .where('name', '=', input.name)
      .where((eb) => eb.or([eb('org_id', 'is', null), eb('org_id', '=', actor.orgId)]))
      .forUpdate()
      .executeTakeFirst()
    if (found?.builtin || (found && found.org_id === null))
      throw rentalError('role_builtin', `${input.name} is a built-in role: built-in roles do not change`)
    const holders = await trx
      .selectFrom('org_members')
      .select(['id'])
      .where('org_id', '=', actor.orgId)
      .where('role', '=', input.name)
      .execute()
    if (found && holders.length > 0 && found.permissions.includes(OWNER_PERMISSION))
      if (!permissions.includes(OWNER_PERMISSION))
        throw rentalError(
          'role_in_use',
          `the role ${input.name} is held by ${holders.length} member(s) and cannot lose ${OWNER_PERMISSION}`,
        )
    const description = input.description ?? found?.description ?? `custom role ${input.name}`
    if (found)
      await trx
        .updateTable('rental_roles')
        .set({ permissions, description })
        .where('name', '=', input.name)
        .where('org_id', '=', actor.orgId)
        .execute()
    else
      await trx
        .insertInto('rental_roles')
        .values({ name: input.name, permissions, description, builtin: false, org_id: actor.orgId })
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
