import type { RentalDb } from '../../db.ts'

export type PolicyKind = 'web' | 'egress'

export interface EgressTables {
  rental_engagement_policies: {
    engagement_id: string
    kind: PolicyKind
    version: number
    org_id: string
    policy: unknown
    actor: string
    created_at: Date
  }
}

/** The engagement's latest policy of a kind (undefined before one is set). */
export const latestPolicy = (db: RentalDb, engagementId: string, kind: PolicyKind) =>
  db
    .selectFrom('rental_engagement_policies')
    .selectAll()
    .where('engagement_id', '=', engagementId)
    .where('kind', '=', kind)
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst()

export const insertPolicy = (db: RentalDb, row: EgressTables['rental_engagement_policies']) =>
  db
    .insertInto('rental_engagement_policies')
    .values({ ...row, policy: JSON.stringify(row.policy) })
    .returningAll()
    .executeTakeFirstOrThrow()
