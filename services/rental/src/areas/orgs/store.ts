import { type MoneyLocale, OLDEST_FIRST, pageOfRows } from '@svc/kit'
import { type ColumnType, type Generated, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The orgs area's tables: client organizations, their members (and invitations), the roles. */
export interface OrgTables {
  orgs: {
    id: string
    name: string
    /** The default name in Arabic (an organization made at a first sign-in), null otherwise. */
    name_ar: ColumnType<string | null, string | null | undefined, string | null>
    kind: Generated<OrgKind>
    created_at: Generated<Date>
    /** Set by erasure (POST /api/clients/erase): the name is then a pseudonym. */
    erased_at: Date | null
  }
  org_members: {
    id: string
    org_id: string
    subject: string | null
    email: string | null
    role: string
    /** The member's language for the console, errors and amounts (`en`, `ar`); null: not chosen. */
    locale: 'en' | 'ar' | null
    invited_by: string | null
    created_at: Generated<Date>
    joined_at: Date | null
    /** The member's own profile (PATCH /v1/users/me). */
    display_name: Generated<string | null>
    notifications: ColumnType<unknown, string | undefined, string>
  }
  /** A role: built in (immutable, org_id null) or an organization's custom one (PUT /v1/roles). */
  rental_roles: {
    name: string
    permissions: string[]
    description: string
    /** A built-in role's description in Arabic (migration 0054); null for a custom one. */
    description_ar: ColumnType<string | null, string | null | undefined, string | null>
    builtin: Generated<boolean>
    org_id: ColumnType<string | null, string | null | undefined, string | null>
  }
}

/**
 * What an organization is: a `client` (hires agents; every organization made at sign-in), a
 * `provider` (publishes agents), or the `platform` itself (its own provider organization, which
 * publishes the built-in agents: `org_platform`, made by migration 0021).
 */
export type OrgKind = 'client' | 'provider' | 'platform'

/** Organizations by id (unknown ids are left out). */
/** The organizations with those ids, each named in `lang` (the English name where it has no Arabic). */
export const orgsByIds = async (db: RentalDb, ids: readonly string[], lang: MoneyLocale = 'en') =>
  ids.length === 0
    ? []
    : (
        await db.selectFrom('orgs').select(['id', 'name', 'name_ar', 'kind']).where('id', 'in', ids).execute()
      ).map(({ name_ar, ...org }) => ({ ...org, name: lang === 'ar' && name_ar ? name_ar : org.name }))

/** Organization ids after `after`, in id order, a page at a time (the retention job walks them). */
export const orgIdsAfter = async (db: RentalDb, after: string, limit: number) =>
  (await db.selectFrom('orgs').select('id').where('id', '>', after).orderBy('id').limit(limit).execute()).map(
    (r) => r.id,
  )

/** A joined subject's organization id, without its role (the audit record's lookup). */
export const orgIdOfSubject = async (db: RentalDb, subject: string) =>
  (await db.selectFrom('org_members').select('org_id').where('subject', '=', subject).executeTakeFirst())
    ?.org_id ?? null

/** A joined subject's membership, with its role's permissions (one query per request). */
export const membershipBySubject = (db: RentalDb, subject: string) =>
  db
    .selectFrom('org_members as m')
    .innerJoin('rental_roles as r', (join) =>
      join
        .onRef('r.name', '=', 'm.role')
        .on((eb) => eb.or([eb('r.org_id', 'is', null), eb('r.org_id', '=', eb.ref('m.org_id'))])),
    )
    .select(['m.id', 'm.org_id', 'm.role', 'm.locale', 'r.permissions'])
    .where('m.subject', '=', subject)
    .executeTakeFirst()

/** A membership as `membershipColumn` answers it (the columns of `membershipBySubject`). */
export interface MembershipJson {
  id: string
  org_id: string
  role: string
  locale: 'en' | 'ar' | null
  permissions: string[]
}

/**
 * `membershipBySubject` as a column (`membership`: JSON, null for none) of another read whose
 * `subject` column names the subject (the console session's): the two in one statement.
 */
export const membershipColumn = (subject: string) =>
  sql<MembershipJson | null>`(
    select json_build_object('id', m.id, 'org_id', m.org_id, 'role', m.role, 'locale', m.locale,
      'permissions', r.permissions)
    from org_members m
    join rental_roles r on r.name = m.role and (r.org_id is null or r.org_id = m.org_id)
    where m.subject = ${sql.ref(subject)}
    limit 1
  )`.as('membership')

/** Whether `name` is a built-in role or one of the organization's own (another organization's is not). */
export const roleExists = async (db: RentalDb, orgId: string, name: string) =>
  (await db
    .selectFrom('rental_roles')
    .select('name')
    .where('name', '=', name)
    .where((eb) => eb.or([eb('org_id', 'is', null), eb('org_id', '=', orgId)]))
    .executeTakeFirst()) !== undefined

/** The oldest invitation waiting for this email (case-insensitive), locked to be taken once. */
export const invitationFor = (db: RentalDb, email: string) =>
  db
    .selectFrom('org_members')
    .selectAll()
    .where('subject', 'is', null)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .forUpdate()
    .executeTakeFirst()

export const joinInvitation = (db: RentalDb, id: string, subject: string, at: Date) =>
  db
    .updateTable('org_members')
    .set({ subject, joined_at: at })
    .where('id', '=', id)
    .where('subject', 'is', null)
    .executeTakeFirst()

/** Locks the organization: its member changes happen one at a time (the last-owner rule holds under races). */
export async function lockOrg(db: RentalDb, orgId: string) {
  await db.selectFrom('orgs').select('id').where('id', '=', orgId).forUpdate().executeTakeFirst()
}

export async function insertOrg(db: RentalDb, org: { id: string; name: string; name_ar?: string | null }) {
  await db.insertInto('orgs').values(org).execute()
}

export async function insertMember(
  db: RentalDb,
  row: {
    id: string
    org_id: string
    subject: string | null
    email: string | null
    role: string
    invited_by: string | null
    joined_at: Date | null
  },
) {
  return db.insertInto('org_members').values(row).returningAll().executeTakeFirstOrThrow()
}

/** A member or invitation of `orgId` (locked in a transaction): another organization's is not found. */
export const memberOf = (db: RentalDb, orgId: string, id: string, lock = false) => {
  let query = db.selectFrom('org_members').selectAll().where('id', '=', id).where('org_id', '=', orgId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const membersOf = (db: RentalDb, orgId: string, limit: number, offset: number) =>
  pageOfRows(db, { table: 'org_members', owner: ['org_id', orgId], order: OLDEST_FIRST }, { limit, offset })

/** The organization's joined owners, locked: the last one may not leave or lose the role. */
export const ownersOf = (db: RentalDb, orgId: string) =>
  db
    .selectFrom('org_members')
    .select('id')
    .where('org_id', '=', orgId)
    .where('role', '=', 'owner')
    .where('subject', 'is not', null)
    .forUpdate()
    .execute()

export const setRole = (db: RentalDb, id: string, role: string) =>
  db.updateTable('org_members').set({ role }).where('id', '=', id).returningAll().executeTakeFirstOrThrow()

export const deleteMember = (db: RentalDb, id: string) =>
  db.deleteFrom('org_members').where('id', '=', id).executeTakeFirst()

/** Whether the organization already has this email, invited or joined (other organizations are not asked). */
export const emailTaken = async (db: RentalDb, orgId: string, email: string) =>
  (await db
    .selectFrom('org_members')
    .select('id')
    .where('org_id', '=', orgId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .executeTakeFirst()) !== undefined

/**
 * Erasure: the organization's members and invitations deleted (their subjects answered, for their
 * sessions), its name replaced by a pseudonym; the row stays for the money records that name it.
 */
export async function eraseOrgMembers(trx: RentalDb, orgId: string, at: Date) {
  const members = await trx
    .deleteFrom('org_members')
    .where('org_id', '=', orgId)
    .returning(['id', 'subject'])
    .execute()
  await trx
    .updateTable('orgs')
    .set({ name: `Erased organization ${orgId}`, name_ar: null, erased_at: at })
    .where('id', '=', orgId)
    .execute()
  return {
    members: members.length,
    subjects: members.flatMap((m) => (m.subject ? [m.subject] : [])),
  }
}

/** A joined member of an idp subject, locked (the rental keeps one membership per subject). */
export const memberBySubject = (db: RentalDb, subject: string) =>
  db.selectFrom('org_members').selectAll().where('subject', '=', subject).forUpdate().executeTakeFirst()

/** The idp changed the user's email: the member's email follows. */
export async function setEmailOfSubject(db: RentalDb, subject: string, email: string) {
  await db.updateTable('org_members').set({ email }).where('subject', '=', subject).execute()
}

const PROFILE_COLUMNS = ['id', 'email', 'role', 'display_name', 'locale', 'notifications'] as const

/** A member's own profile columns (locked in a transaction when `lock`). */
export const profileRow = (db: RentalDb, orgId: string, memberId: string, lock = false) => {
  let query = db
    .selectFrom('org_members')
    .select(PROFILE_COLUMNS)
    .where('id', '=', memberId)
    .where('org_id', '=', orgId)
  if (lock) query = query.forUpdate()
  return query.executeTakeFirst()
}

export const updateProfile = (
  db: RentalDb,
  id: string,
  set: { display_name?: string | null; locale?: 'en' | 'ar' | null; notifications: string },
) =>
  db
    .updateTable('org_members')
    .set(set)
    .where('id', '=', id)
    .returning(PROFILE_COLUMNS)
    .executeTakeFirstOrThrow()

/** The member's language, set only when it changes: whether it did. */
export const setLocaleIfChanged = async (
  db: RentalDb,
  orgId: string,
  memberId: string,
  locale: 'en' | 'ar',
) =>
  (
    await db
      .updateTable('org_members')
      .set({ locale })
      .where('id', '=', memberId)
      .where('org_id', '=', orgId)
      .where((eb) => eb.or([eb('locale', 'is', null), eb('locale', '!=', locale)]))
      .executeTakeFirst()
  ).numUpdatedRows > 0n

/** The built-in roles and the organization's own, each with how many of its members and invitations hold it. */
export async function rolesWithHolders(db: RentalDb, orgId: string, lang: MoneyLocale = 'en') {
  const rows = await db
    .selectFrom('rental_roles as r')
    .select(['r.name', 'r.description', 'r.description_ar', 'r.permissions', 'r.builtin'])
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
  return rows.map(({ description_ar, ...r }) => ({
    ...r,
    description: lang === 'ar' && description_ar ? description_ar : r.description,
    members: Number(r.members ?? 0),
  }))
}

/** A built-in role or the organization's own of that name, locked. */
export const roleForUpdate = (db: RentalDb, orgId: string, name: string) =>
  db
    .selectFrom('rental_roles')
    .selectAll()
    .where('name', '=', name)
    .where((eb) => eb.or([eb('org_id', 'is', null), eb('org_id', '=', orgId)]))
    .forUpdate()
    .executeTakeFirst()

/** The organization's members and invitations holding the role, split (under the organization's lock). */
export async function roleHolders(db: RentalDb, orgId: string, role: string) {
  const rows = await db
    .selectFrom('org_members')
    .select(['id', 'subject'])
    .where('org_id', '=', orgId)
    .where('role', '=', role)
    .execute()
  const members = rows.filter((r) => r.subject !== null).length
  return { total: rows.length, members, invitations: rows.length - members }
}

export const updateRole = (
  db: RentalDb,
  orgId: string,
  name: string,
  set: { permissions: string[]; description: string },
) => db.updateTable('rental_roles').set(set).where('name', '=', name).where('org_id', '=', orgId).execute()

export const insertRole = (
  db: RentalDb,
  row: { name: string; permissions: string[]; description: string; org_id: string },
) =>
  db
    .insertInto('rental_roles')
    .values({ ...row, builtin: false })
    .execute()

/** Deletes the organization's custom role (never a built-in one: those have no org_id). */
export const deleteRole = (db: RentalDb, orgId: string, name: string) =>
  db
    .deleteFrom('rental_roles')
    .where('org_id', '=', orgId)
    .where('name', '=', name)
    .where('builtin', '=', false)
    .execute()
