import type { MoneyLocale as Lang } from '@svc/kit'
import { type AliasedRawBuilder, sql } from 'kysely'
import { inLang } from './store.ts'

/** A job's title and an agent's display name in both languages, as another read's columns carry them. */
export interface CatalogueNames {
  job_title: string | null
  job_title_ar: string | null
  agent_name: string | null
  agent_name_ar: string | null
}

/**
 * The columns of `CatalogueNames` for another area's read of a row naming a job and an agent (the
 * engagement a task is made under): `jobId` and `agentDid` are that read's columns. They save the
 * two reads of `titlesOf` and `agentNamesOf` for one row; null for a job or agent not in the catalogue.
 */
export const catalogueNameColumns = (
  jobId: string,
  agentDid: string,
): Array<AliasedRawBuilder<string | null, keyof CatalogueNames>> => [
  sql<string | null>`(select j.title from jobs j where j.id = ${sql.ref(jobId)})`.as('job_title'),
  sql<string | null>`(select j.title_ar from jobs j where j.id = ${sql.ref(jobId)})`.as('job_title_ar'),
  sql<string | null>`(select a.name from agents a where a.did = ${sql.ref(agentDid)})`.as('agent_name'),
  sql<string | null>`(select a.name_ar from agents a where a.did = ${sql.ref(agentDid)})`.as('agent_name_ar'),
]

/** The names in `lang`, as `titlesOf` and `agentNamesOf` answer them (English where there is no Arabic). */
export const catalogueNamesIn = (lang: Lang, names: CatalogueNames) => ({
  jobTitle: names.job_title === null ? undefined : inLang(lang, names.job_title, names.job_title_ar),
  agentName: names.agent_name === null ? undefined : inLang(lang, names.agent_name, names.agent_name_ar),
})
