import type { MoneyLocale as Lang } from '@svc/kit'
import { type AliasedRawBuilder, type ColumnType, type Generated, sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import type { SeedJob } from './seed.ts'

/** The catalogue's tables: jobs, the agents the agents service lists, and which agent serves which job. */
export interface CatalogueTables {
  agents: {
    id: string
    did: string
    name: string
    description: string
    /** The display name and description in Arabic, null when none was given (readers get the English). */
    name_ar: string | null
    description_ar: string | null
    card_url: string
    endpoint: string
    skills: ColumnType<unknown[], string, string>
    /** The provider organization that publishes it (the built-in agents: org_platform). */
    provider_org_id: Generated<string>
    updated_at: Generated<Date>
  }
  jobs: {
    id: string
    title: string
    profile: string
    outcome: string
    description: string
    /** The title, outcome and description in Arabic, null when none was given (readers get the English). */
    title_ar: string | null
    outcome_ar: string | null
    description_ar: string | null
    price_fils: number
    currency: Generated<string>
    created_at: Generated<Date>
  }
  job_agents: { job_id: string; agent_id: string }
}

export interface AgentRow {
  id: string
  did: string
  name: string
  description: string
  card_url: string
  endpoint: string
  skills: unknown[]
  provider_org_id: string
  /** The display name and description in Arabic, when the agent has them. */
  name_ar?: string | null
  description_ar?: string | null
}

/** The Arabic text when asked for and given, else the English. */
export const inLang = (lang: Lang, en: string, ar: string | null | undefined) =>
  lang === 'ar' && ar ? ar : en

/** Inserts a job and its agents, or leaves them as they are (seeding is idempotent). */
export async function ensureJob(db: RentalDb, job: SeedJob) {
  const arabic = { title_ar: job.ar.title, outcome_ar: job.ar.outcome, description_ar: job.ar.description }
  await db
    .insertInto('jobs')
    .values({
      id: job.id,
      title: job.title,
      profile: job.profile,
      outcome: job.outcome,
      description: job.description,
      price_fils: job.price_fils,
      ...arabic,
    })
    // a catalogue seeded before the Arabic words gets them; everything else stays as it is
    .onConflict((oc) => oc.column('id').doUpdateSet(arabic))
    .execute()
  for (const agent of job.agents)
    await db
      .insertInto('job_agents')
      .values({ job_id: job.id, agent_id: agent })
      .onConflict((oc) => oc.columns(['job_id', 'agent_id']).doNothing())
      .execute()
}

export async function upsertAgent(db: RentalDb, agent: AgentRow) {
  const row = { ...agent, skills: JSON.stringify(agent.skills), updated_at: new Date() }
  await db
    .insertInto('agents')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet(row))
    .execute()
}

/**
 * Every job with the agents that serve it (an agent the agents service has not listed yet is left
 * out), its words in `lang` (English where no Arabic was given).
 */
export async function catalogue(db: RentalDb, lang: Lang) {
  const jobs = await db.selectFrom('jobs').selectAll().orderBy('price_fils').orderBy('id').execute()
  const served = await db
    .selectFrom('job_agents')
    .innerJoin('agents', 'agents.id', 'job_agents.agent_id')
    .select([
      'job_agents.job_id',
      'agents.id',
      'agents.did',
      'agents.name',
      'agents.description',
      'agents.name_ar',
      'agents.description_ar',
      'agents.card_url',
      'agents.skills',
      'agents.provider_org_id',
    ])
    .orderBy('agents.id')
    .execute()
  return jobs.map((job) => ({
    id: job.id,
    title: inLang(lang, job.title, job.title_ar),
    profile: job.profile,
    outcome: inLang(lang, job.outcome, job.outcome_ar),
    description: inLang(lang, job.description, job.description_ar),
    price_fils: job.price_fils,
    currency: job.currency,
    agents: served
      .filter((a) => a.job_id === job.id)
      .map(({ id, did, name, description, name_ar, description_ar, card_url, skills, provider_org_id }) => ({
        id,
        did,
        name: inLang(lang, name, name_ar),
        description: inLang(lang, description, description_ar),
        card_url,
        skills,
        provider_org_id,
      })),
  }))
}

/** The job and, when it serves the job, the agent with that DID. */
export async function jobAndAgent(db: RentalDb, jobId: string, agentDid: string) {
  const job = await db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst()
  if (!job) return { job: undefined, agent: undefined }
  const agent = await db
    .selectFrom('job_agents')
    .innerJoin('agents', 'agents.id', 'job_agents.agent_id')
    .select(['agents.id', 'agents.did', 'agents.card_url'])
    .where('job_agents.job_id', '=', jobId)
    .where('agents.did', '=', agentDid)
    .executeTakeFirst()
  return { job, agent }
}

/** The catalogue's agent with that DID and the jobs it serves, in `lang`, or undefined. */
export async function catalogueAgent(db: RentalDb, did: string, lang: Lang) {
  const row = await db
    .selectFrom('agents')
    .select(['id', 'did', 'name', 'description', 'name_ar', 'description_ar', 'card_url', 'provider_org_id'])
    .where('did', '=', did)
    .executeTakeFirst()
  if (!row) return undefined
  const { name_ar, description_ar, ...agent } = row
  const jobs = await db
    .selectFrom('job_agents')
    .innerJoin('jobs', 'jobs.id', 'job_agents.job_id')
    .select([
      'jobs.id',
      'jobs.title',
      'jobs.title_ar',
      'jobs.outcome',
      'jobs.outcome_ar',
      'jobs.price_fils',
      'jobs.currency',
    ])
    .where('job_agents.agent_id', '=', agent.id)
    .orderBy('jobs.id')
    .execute()
  return {
    ...agent,
    name: inLang(lang, agent.name, name_ar),
    description: inLang(lang, agent.description, description_ar),
    jobs: jobs.map(({ title_ar, outcome_ar, ...j }) => ({
      ...j,
      title: inLang(lang, j.title, title_ar),
      outcome: inLang(lang, j.outcome, outcome_ar),
      price_fils: Number(j.price_fils),
    })),
  }
}

/** The titles of the jobs with those ids, in `lang` (an unknown id is left out). */
export async function jobTitles(db: RentalDb, ids: readonly string[], lang: Lang) {
  if (ids.length === 0) return new Map<string, string>()
  const rows = await db
    .selectFrom('jobs')
    .select(['id', 'title', 'title_ar'])
    .where('id', 'in', [...new Set(ids)])
    .execute()
  return new Map(rows.map((r) => [r.id, inLang(lang, r.title, r.title_ar)]))
}

/** The display names of the catalogue's agents with those DIDs, in `lang` (an unknown DID is left out). */
export async function agentNames(db: RentalDb, dids: readonly string[], lang: Lang) {
  if (dids.length === 0) return new Map<string, string>()
  const rows = await db
    .selectFrom('agents')
    .select(['did', 'name', 'name_ar'])
    .where('did', 'in', [...new Set(dids)])
    .execute()
  return new Map(rows.map((r) => [r.did, inLang(lang, r.name, r.name_ar)]))
}

/** Where the agent with that DID is reached (its A2A card's URL), or undefined: one query, for each task run. */
export const agentCardUrl = async (db: RentalDb, did: string) =>
  (await db.selectFrom('agents').select('card_url').where('did', '=', did).executeTakeFirst())?.card_url

/**
 * The same URL as a column of another area's read of a row naming an agent (`agentDid`: that
 * read's column), for the engagement a task runs under: its run reads the card with the terms.
 */
export const cardUrlColumn = (agentDid: string): AliasedRawBuilder<string | null, 'card_url'> =>
  sql<string | null>`(select a.card_url from agents a where a.did = ${sql.ref(agentDid)})`.as('card_url')

/** Whether `orgId` is the provider organization that publishes the agent with that DID (false: not in the catalogue). */
export const isProviderOf = async (db: RentalDb, orgId: string, did: string) =>
  (await db
    .selectFrom('agents')
    .select('id')
    .where('did', '=', did)
    .where('provider_org_id', '=', orgId)
    .executeTakeFirst()) !== undefined

/**
 * An external agent (the market's external listings) in the catalogue, serving `jobIds` (its other
 * links dropped): answers the ids of those jobs that exist.
 */
export async function registerAgent(db: RentalDb, agent: AgentRow, jobIds: string[]) {
  await upsertAgent(db, agent)
  await db
    .deleteFrom('job_agents')
    .where('agent_id', '=', agent.id)
    .where('job_id', 'not in', jobIds)
    .execute()
  const jobs = await db.selectFrom('jobs').select('id').where('id', 'in', jobIds).execute()
  for (const job of jobs)
    await db
      .insertInto('job_agents')
      .values({ job_id: job.id, agent_id: agent.id })
      .onConflict((oc) => oc.columns(['job_id', 'agent_id']).doNothing())
      .execute()
  return jobs.map((j) => j.id)
}

/** The catalogue's agent with that DID (id and provider), or undefined. */
export const agentByDid = (db: RentalDb, did: string) =>
  db.selectFrom('agents').select(['id', 'provider_org_id']).where('did', '=', did).executeTakeFirst()
