import { randomBytes } from 'node:crypto'
import { isEd25519DidKey, money, type MoneyLocale } from '@svc/kit'
import type { publicAgent } from '@svc/kit/http/public-fetch'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { ModelsOf } from '../models/index.ts'
import type { OnboardingService } from '../onboarding/index.ts'
import * as store from './store.ts'
import type { ListingRow, ListingSearch } from './store.ts'

export interface MarketDeps extends RentalContext {
  events: EventService
  catalogue: Pick<CatalogueService, 'isProviderOf' | 'agentByDid' | 'registerAgent'>
  /** The dispatcher external agents' cards and JWK Sets are fetched through (kit public-fetch). */
  fetchAgent: ReturnType<typeof publicAgent>
  /** The onboarding gate: publishing needs an approved business check (the platform's own listings excepted). */
  onboarding: Pick<OnboardingService, 'assertMayPublish'>
  /** The agents' declared models the listings show (the models area's lookup, given at its mount). */
  models: { of: ModelsOf }
}

/** The platform's own provider organization (the built-in agents are its; operators act for it). */
export const PLATFORM_ORG = 'org_platform'
export const MAX_FILS = Number.MAX_SAFE_INTEGER

/** Who publishes or changes a listing: the member's organization, and whether the member is an operator. */
export interface Publisher {
  orgId: string
  operator: boolean
}

const newListingId = () => `lst_${randomBytes(12).toString('base64url')}`

export function listingView(row: ListingRow, locale: MoneyLocale) {
  const pkg = row.package_price_fils === null ? null : Number(row.package_price_fils)
  return {
    id: row.id,
    provider_org_id: row.org_id,
    agent_did: row.agent_did,
    title: row.title,
    description: row.description,
    skills: row.skills,
    tags: row.tags,
    languages: row.languages,
    price: money(Number(row.price_fils), 'AED', locale),
    package_price: pkg === null ? null : money(pkg, 'AED', locale),
    sla: row.sla,
    availability: {
      state: row.availability,
      max_concurrency: row.max_concurrency,
      until: row.unavailable_until?.toISOString() ?? null,
    },
    external:
      row.card_url === null
        ? null
        : {
            card_url: row.card_url,
            card_sha256: row.card_sha256!,
            card_changed: row.card_changed,
            latest_card_sha256: row.card_latest_sha256!,
            signed_by_kid: row.card_signature_kid,
            fetched_at: row.card_fetched_at?.toISOString() ?? null,
          },
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}
export type ListingView = ReturnType<typeof listingView>

/** Listings with their agents' declared models (one lookup for all). */
export async function withModels<L extends { agent_did: string }>(deps: MarketDeps, listings: L[]) {
  const models = await deps.models.of(listings.map((l) => l.agent_did))
  return listings.map((l) => ({ ...l, models: models.get(l.agent_did) ?? [] }))
}

export interface NewListing {
  agent_did: string
  title: string
  description: string
  skills?: string[] | undefined
  tags?: string[] | undefined
  languages?: string[] | undefined
  price_fils: number
  package_price_fils?: number | undefined
  sla?: Record<string, unknown> | undefined
}

function checkFils(field: string, value: number) {
  if (!Number.isSafeInteger(value) || value <= 0)
    throw rentalError('invalid_request', `${field} must be a positive integer no larger than 2^53-1`)
  return value
}

/** Trimmed, distinct, non-empty words (lowercased for tags and languages: they are matched exactly). */
const words = (list: string[] | undefined, lower: boolean) => [
  ...new Set((list ?? []).map((w) => (lower ? w.trim().toLowerCase() : w.trim())).filter((w) => w !== '')),
]

/**
 * The organization a listing of that agent is published for: the member's own when it provides the
 * agent; the platform's when the member is an operator and the agent is the platform's; else 403.
 */
async function publisherOrg(deps: MarketDeps, who: Publisher, did: string) {
  if (await deps.catalogue.isProviderOf(who.orgId, did)) return who.orgId
  if (who.operator && (await deps.catalogue.isProviderOf(PLATFORM_ORG, did))) return PLATFORM_ORG
  throw rentalError('forbidden', `your organization does not provide the agent ${did}`)
}

export async function publishListing(
  deps: MarketDeps,
  who: Publisher,
  input: NewListing,
  actor: Actor,
  locale: MoneyLocale,
  external?: {
    orgId: string
    card: store.ListedCard
    /** Writes in the listing's transaction, before it (the catalogue's agent). */
    before: (trx: RentalDb) => Promise<void>
  },
) {
  if (!isEd25519DidKey(input.agent_did))
    throw rentalError('invalid_agent_did', 'agent_did is not an Ed25519 did:key')
  const title = input.title.trim()
  const description = input.description.trim()
  if (title === '') throw rentalError('invalid_request', 'title must not be blank')
  if (description === '') throw rentalError('invalid_request', 'description must not be blank')
  const price = checkFils('price_fils', input.price_fils)
  const pkg =
    input.package_price_fils === undefined ? null : checkFils('package_price_fils', input.package_price_fils)
  const orgId = external?.orgId ?? (await publisherOrg(deps, who, input.agent_did))
  if (orgId !== PLATFORM_ORG) await deps.onboarding.assertMayPublish(orgId)
  const row = await inTransaction(deps.db, async (trx) => {
    await external?.before(trx)
    const { inserted, ...made } = await store.upsertListing(
      trx,
      {
        id: newListingId(),
        org_id: orgId,
        agent_did: input.agent_did,
        title,
        description,
        skills: words(input.skills, false),
        tags: words(input.tags, true),
        languages: words(input.languages, true),
        price_fils: price,
        package_price_fils: pkg,
        sla: input.sla ?? {},
        created_by: actor.id,
        created_at: new Date(),
      },
      external?.card,
    )
    await deps.events.record(trx, {
      orgId,
      type: inserted ? 'listing.published' : 'listing.updated',
      subjects: { listing_id: made.id, agent_did: made.agent_did },
      actor,
      data: {
        title: made.title,
        price_fils: price,
        tags: made.tags,
        languages: made.languages,
        ...(external ? { card_url: external.card.card_url, card_sha256: external.card.card_sha256 } : {}),
      },
    })
    return made
  })
  return listingView(row, locale)
}

/** Whether the listing is the member's organization's (operators: the platform's too). */
const ownedBy = (row: ListingRow, who: Publisher) =>
  row.org_id === who.orgId || (who.operator && row.org_id === PLATFORM_ORG)

/** A listing by id; with `who` (a member reading the market), an unpublished one only to its organization. */
export async function listingDetail(deps: MarketDeps, id: string, locale: MoneyLocale, who?: Publisher) {
  const row = await store.listingById(deps.db, id)
  if (!row || (who && row.availability === 'unpublished' && !ownedBy(row, who)))
    throw rentalError('listing_not_found', `no listing ${id}`)
  return listingView(row, locale)
}

export async function listingSearch(deps: MarketDeps, search: ListingSearch, locale: MoneyLocale) {
  if (search.minPrice !== undefined && search.maxPrice !== undefined && search.minPrice > search.maxPrice)
    throw rentalError('invalid_request', 'min_price must not be above max_price')
  const q = search.q?.trim()
  const { rows, total } = await store.searchListings(deps.db, { ...search, q: q === '' ? undefined : q })
  return {
    listings: rows.map((r) => ({ ...listingView(r, locale), rank: Number(r.rank) })),
    total,
    limit: search.limit,
    offset: search.offset,
  }
}

export type AvailabilityInput =
  | { state: 'available' }
  | { state: 'limited'; max_concurrency: number }
  | { state: 'unavailable'; until?: string | undefined }
  | { state: 'unpublished' }

/** Sets a listing's availability: by its organization's members (operators for the platform's); others 404. */
export async function changeAvailability(
  deps: MarketDeps,
  who: Publisher,
  id: string,
  input: AvailabilityInput,
  actor: Actor,
  locale: MoneyLocale,
) {
  let until: Date | null = null
  if (input.state === 'unavailable' && input.until !== undefined) {
    until = new Date(input.until)
    if (Number.isNaN(until.getTime()))
      throw rentalError('invalid_request', 'until must be an ISO 8601 date-time')
  }
  const cap = input.state === 'limited' ? input.max_concurrency : null
  if (cap !== null && (!Number.isSafeInteger(cap) || cap < 1 || cap > 10_000))
    throw rentalError('invalid_request', 'max_concurrency must be an integer from 1 to 10000')
  const row = await inTransaction(deps.db, async (trx) => {
    const found = await store.listingById(trx, id, true)
    if (!found || !ownedBy(found, who)) throw rentalError('listing_not_found', `no listing ${id}`)
    const changed = await store.setAvailability(
      trx,
      id,
      { availability: input.state, max_concurrency: cap, unavailable_until: until },
      new Date(),
    )
    await deps.events.record(trx, {
      orgId: found.org_id,
      type: 'listing.availability_changed',
      subjects: { listing_id: id, agent_did: found.agent_did },
      actor,
      data: {
        from: found.availability,
        to: input.state,
        max_concurrency: cap,
        until: until?.toISOString() ?? null,
      },
    })
    return changed
  })
  return listingView(row, locale)
}

/**
 * Whether the agent may be hired, in the hire's transaction (its listing row shared-locked, so a
 * change of availability waits for the hire or the hire sees it): 409 `listing_unavailable` when
 * its latest listing is unavailable now or unpublished, `listing_card_changed` when the external
 * agent's card changed since it was listed. No listing: hireable (a built-in agent not on the market).
 */
export async function assertHireable(trx: RentalDb, agentDid: string, now = new Date()) {
  const row = await store.listingOfAgent(trx, agentDid, 'share')
  if (!row) return
  if (row.availability === 'unpublished')
    throw rentalError('listing_unavailable', `the listing ${row.id} is unpublished`)
  if (row.card_changed)
    throw rentalError(
      'listing_card_changed',
      `the agent card of the listing ${row.id} changed since it was listed (sha256 ${row.card_sha256} then, ${row.card_latest_sha256} now): its provider publishes it again`,
    )
  if (row.availability !== 'unavailable') return
  if (row.unavailable_until !== null && row.unavailable_until <= now) return
  throw rentalError(
    'listing_unavailable',
    `the listing ${row.id} is unavailable${row.unavailable_until ? ` until ${row.unavailable_until.toISOString()}` : ''}`,
  )
}
