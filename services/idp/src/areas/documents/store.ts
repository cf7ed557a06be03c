import type { Generated } from 'kysely'

/** The tables of the documents area. */
export interface DocumentsTables {
  constitutions: { hash: string; document: Record<string, unknown>; published_at: Generated<Date> }
}
