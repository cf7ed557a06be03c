import type { Generated } from 'kysely'
import type { IdpDb } from '../../db.ts'

/** The tables of the documents area. */
export interface DocumentsTables {
  constitutions: { hash: string; document: Record<string, unknown>; published_at: Generated<Date> }
}

export async function insertConstitution(db: IdpDb, hash: string, rules: Record<string, unknown>) {
  await db
    .insertInto('constitutions')
    .values({ hash, document: JSON.stringify(rules) as never })
    .onConflict((oc) => oc.column('hash').doNothing())
    .execute()
}

/** At most two, so that an ambiguous prefix shows. */
export function constitutionsByHash(db: IdpDb, given: string, full: boolean) {
  return db
    .selectFrom('constitutions')
    .selectAll()
    .where('hash', full ? '=' : 'like', full ? given : `sha256:${given}%`)
    .limit(2)
    .execute()
}
