import type { MoneyLocale } from '@svc/kit'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import {
  deleteRole,
  insertRole,
  lockOrg,
  roleForUpdate,
  roleHolders,
  rolesWithHolders,
  updateRole,
} from './store.ts'
import type { Recorder } from './service.ts'
import { type Membership, refuse } from '../../http/index.ts'

/** The permission that makes an owner an owner: a role in use never loses it (PUT /v1/roles). */
export const OWNER_PERMISSION = 'members:owners'

/** The built-in roles (rows of `rental_roles`, made by migration 0013). */
export const ROLES = ['owner', 'admin', 'member', 'billing', 'viewer'] as const

export interface RoleView {
  name: string
  description: string
  permissions: string[]
  builtin: boolean
  /** How many members and invitations hold it. */
  members: number
}

/**
 * The built-in roles and the organization's own custom ones (another organization's are not
 * listed), the built-in ones described in `lang` (a custom role keeps the words its maker typed).
 */
export const roleList = (db: RentalDb, orgId: string, lang: MoneyLocale = 'en'): Promise<RoleView[]> =>
  rolesWithHolders(db, orgId, lang)

const builtinRefusal = (name: string, what: string) =>
  rentalError('role_builtin', `${name} is a built-in role: built-in roles do not ${what}`)

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
    const found = await roleForUpdate(trx, actor.orgId, input.name)
    if (found?.builtin || (found && found.org_id === null)) throw builtinRefusal(input.name, 'change')
    const holders = (await roleHolders(trx, actor.orgId, input.name)).total
    if (found && holders > 0 && found.permissions.includes(OWNER_PERMISSION))
      if (!permissions.includes(OWNER_PERMISSION))
        throw rentalError(
          'role_in_use',
          `the role ${input.name} is held by ${holders} member(s) and cannot lose ${OWNER_PERMISSION}`,
        )
    const description = input.description ?? found?.description ?? `custom role ${input.name}`
    if (found) await updateRole(trx, actor.orgId, input.name, { permissions, description })
    else await insertRole(trx, { name: input.name, permissions, description, org_id: actor.orgId })
    await by.events.record(trx, {
      orgId: actor.orgId,
      type: 'role.saved',
      subjects: { role: input.name },
      actor: by.actor,
      data: { permissions, previous: found?.permissions ?? null },
    })
    return { name: input.name, description, permissions, builtin: false, members: holders, created: !found }
  })
}

/**
 * Deletes a custom role of the organization (DELETE /v1/roles/{name}). Built-in roles stay (409
 * `role_builtin`); a role members or invitations still hold stays until they are given another
 * (409 `role_in_use`, naming how many): no member is left with a role that is gone. Another
 * organization's role is not found (404 `role_not_found`). Recorded as `role.deleted`.
 */
export async function removeRole(db: RentalDb, by: Recorder, actor: Membership, name: string) {
  return inTransaction(db, async (trx) => {
    // the organization's lock: no invitation or role change takes the role while it goes
    await lockOrg(trx, actor.orgId)
    const found = await roleForUpdate(trx, actor.orgId, name)
    if (!found) throw rentalError('role_not_found', `no custom role ${name} in the organization`)
    if (found.builtin || found.org_id === null) throw builtinRefusal(name, 'get deleted')
    const holders = await roleHolders(trx, actor.orgId, name)
    if (holders.total > 0)
      throw rentalError(
        'role_in_use',
        `the role ${name} is held by ${holders.members} member(s) and ${holders.invitations} pending invitation(s): give them another role first`,
      )
    await deleteRole(trx, actor.orgId, name)
    await by.events.record(trx, {
      orgId: actor.orgId,
      type: 'role.deleted',
      subjects: { role: name },
      actor: by.actor,
      data: { permissions: found.permissions, description: found.description },
    })
    return { name, deleted: true as const }
  })
}
