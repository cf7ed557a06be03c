import type { AliasedRawBuilder, Generated, Selectable } from 'kysely'
import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'

/** The market area's table: the published listings (search: a tsvector written with each row). */
export interface MarketTables {
  rental_listings: {
    id: string
    org_id: string
    agent_did: string
    title: string
    description: string
    skills: string[]
    tags: string[]
    languages: string[]
    /** bigint: read as a string by pg, a number by PGlite; written as a number */
    price_fils: number | string
    package_price_fils: number | string | null
    sla: Record<string, unknown>
    availability: Generated<'available' | 'limited' | 'unavailable' | 'unpublished'>
    max_concurrency: number | null
    unavailable_until: Date | null
    search: unknown
    /** An external agent's card (0028): all null for a built-in agent. */
    card_url: Generated<string | null>
    card_sha256: Generated<string | null>
    card_latest_sha256: Generated<string | null>
    card_changed: Generated<boolean>
    card_signature_kid: Generated<string | null>
    card_token_resource: Generated<string | null>
    card_fetched_at: Generated<Date | null>
    created_by: string | null
    created_at: Generated<Date>
    updated_at: Generated<Date>
  }
}

export type ListingRow = Omit<Selectable<MarketTables['rental_listings']>, 'search'>

const COLUMNS = [
  'id',
  'org_id',
  'agent_did',
  'title',
  'description',
  'skills',
  'tags',
  'languages',
  'price_fils',
  'package_price_fils',
  'sla',
  'availability',
  'max_concurrency',
  'unavailable_until',
  'card_url',
  'card_sha256',
  'card_latest_sha256',
  'card_changed',
  'card_signature_kid',
  'card_token_resource',
  'card_fetched_at',
  'created_by',
  'created_at',
  'updated_at',
] as const

/** The search vector: title weighs most, then skills, then the description ('simple': no stemming). */
const searchVector = (title: string, skills: string[], description: string) =>
  sql`setweight(to_tsvector('simple', ${title}), 'A') || setweight(to_tsvector('simple', ${skills.join(' ')}), 'B') || setweight(to_tsvector('simple', ${description}), 'C')`

type CardColumns =
  | 'card_url'
  | 'card_sha256'
  | 'card_latest_sha256'
  | 'card_changed'
  | 'card_signature_kid'
  | 'card_token_resource'
  | 'card_fetched_at'
export type NewListingRow = Omit<
  ListingRow,
  'availability' | 'max_concurrency' | 'unavailable_until' | 'updated_at' | CardColumns
>
/** An external agent's card as listed. */
export interface ListedCard {
  card_url: string
  card_sha256: string
  card_signature_kid: string | null
  card_token_resource: string | null
}

/**
 * Publishes (or, for an agent the organization listed already, updates) a listing; `inserted` tells
 * which. An unpublished listing published again is available again; with `card`, the card as listed
 * now (its change flag cleared).
 */
export const upsertListing = (db: RentalDb, row: NewListingRow, card?: ListedCard) => {
  const listed = card && {
    ...card,
    card_latest_sha256: card.card_sha256,
    card_changed: false,
    card_fetched_at: row.created_at,
  }
  const changes = {
    ...listed,
    availability: sql<'available'>`case when rental_listings.availability = 'unpublished' then 'available' else rental_listings.availability end`,
    title: row.title,
    description: row.description,
    skills: row.skills,
    tags: row.tags,
    languages: row.languages,
    price_fils: row.price_fils,
    package_price_fils: row.package_price_fils,
    sla: JSON.stringify(row.sla) as unknown as Record<string, unknown>,
    search: searchVector(row.title, row.skills, row.description),
    updated_at: row.created_at,
  }
  return db
    .insertInto('rental_listings')
    .values({ ...row, ...changes, availability: 'available' })
    .onConflict((oc) => oc.columns(['agent_did', 'org_id']).doUpdateSet(changes))
    .returning(COLUMNS)
    .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
    .executeTakeFirstOrThrow()
}

/** A listing by id (any organization's: the market is read by every member), or undefined. */
export const listingById = (db: RentalDb, id: string, lock = false) => {
  const q = db.selectFrom('rental_listings').select(COLUMNS).where('id', '=', id)
  return (lock ? q.forUpdate() : q).executeTakeFirst()
}

/** The latest listing of an agent (undefined when none is published). */
export const listingOfAgent = (db: RentalDb, did: string, lock: 'share' | 'update' | false = false) => {
  const q = db
    .selectFrom('rental_listings')
    .select(COLUMNS)
    .where('agent_did', '=', did)
    .orderBy('created_at', 'desc')
    .limit(1)
  return (lock === 'share' ? q.forShare() : lock === 'update' ? q.forUpdate() : q).executeTakeFirst()
}

/** The latest listing of an agent, its id and availability only (a task's capacity check). */
export const availabilityOfAgent = (db: RentalDb, did: string) =>
  db
    .selectFrom('rental_listings')
    .select(['id', 'availability'])
    .where('agent_did', '=', did)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst()

/**
 * The same read as a column of another area's read of a row naming an agent (`agentDid`: that
 * read's column): the id of the agent's latest listing when it is `limited`, else null. A task's
 * engagement read carries it, so the capacity check reads nothing for an agent not limited.
 */
export const limitedListingColumn = (
  agentDid: string,
): AliasedRawBuilder<string | null, 'limited_listing_id'> =>
  sql<string | null>`(select case when l.availability = 'limited' then l.id end from rental_listings l
    where l.agent_did = ${sql.ref(agentDid)} order by l.created_at desc limit 1)`.as('limited_listing_id')

/** Records a fetch of the listing's card: its hash now, and whether it differs from the listed one. */
export const cardFetched = (db: RentalDb, id: string, latest: string, changed: boolean, at: Date) =>
  db
    .updateTable('rental_listings')
    .set({ card_latest_sha256: latest, card_changed: changed, card_fetched_at: at, updated_at: at })
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()

/** The token resource of the external agent reached at `url` (its endpoint is under it), or undefined. */
export const tokenResourceOf = async (db: RentalDb, url: string) =>
  (
    await db
      .selectFrom('rental_listings')
      .select('card_token_resource')
      .where('card_token_resource', 'is not', null)
      .where(
        sql<boolean>`(${url} = card_token_resource or left(${url}, length(card_token_resource) + 1) = card_token_resource || '/')`,
      )
      .limit(1)
      .executeTakeFirst()
  )?.card_token_resource ?? undefined

export const setAvailability = (
  db: RentalDb,
  id: string,
  a: {
    availability: 'available' | 'limited' | 'unavailable' | 'unpublished'
    max_concurrency: number | null
    unavailable_until: Date | null
  },
  now: Date,
) =>
  db
    .updateTable('rental_listings')
    .set({ ...a, updated_at: now })
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow()

export interface ListingSearch {
  q?: string | undefined
  tag?: string | undefined
  minPrice?: number | undefined
  maxPrice?: number | undefined
  language?: string | undefined
  availability?: 'available' | 'limited' | 'unavailable' | undefined
  sort: 'relevance' | 'price' | 'newest'
  limit: number
  offset: number
}

/** Listings matching the search, ranked (ts_rank over the weighted vector when `q` is given), and their count. */
export async function searchListings(db: RentalDb, s: ListingSearch) {
  let base = db.selectFrom('rental_listings')
  const query = s.q === undefined ? undefined : sql`websearch_to_tsquery('simple', ${s.q})`
  if (query) base = base.where(sql<boolean>`search @@ ${query}`)
  if (s.tag !== undefined) base = base.where(sql<boolean>`${s.tag} = any (tags)`)
  if (s.language !== undefined) base = base.where(sql<boolean>`${s.language} = any (languages)`)
  if (s.minPrice !== undefined) base = base.where('price_fils', '>=', s.minPrice)
  if (s.maxPrice !== undefined) base = base.where('price_fils', '<=', s.maxPrice)
  if (s.availability !== undefined) base = base.where('availability', '=', s.availability)
  else base = base.where('availability', '<>', 'unpublished')
  const rank = query ? sql<number>`ts_rank(search, ${query})` : sql<number>`0::real`
  let rows = base.select(COLUMNS).select(rank.as('rank'))
  if (s.sort === 'price') rows = rows.orderBy('price_fils')
  else if (s.sort === 'relevance' && query) rows = rows.orderBy('rank', 'desc')
  rows = rows.orderBy('created_at', 'desc')
  const [found, count] = await Promise.all([
    rows.orderBy('id').limit(s.limit).offset(s.offset).execute(),
    base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow(),
  ])
  return { rows: found, total: Number(count.n) }
}

/** The published listings' agents, oldest listing first. */
export const publishedAgents = (db: RentalDb) =>
  db
    .selectFrom('rental_listings')
    .select(['id as listing_id', 'agent_did', 'title', 'card_url'])
    .where('availability', '!=', 'unpublished')
    .orderBy('id')
    .execute()
