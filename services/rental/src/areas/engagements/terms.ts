import type { RentalContext } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import type { CatalogueNames } from '../catalogue/index.ts'
import { checkTaskPrice, configFrom, configOf, type EngagementConfig } from './config.ts'
import { engagementWithConfig, type EngagementRow } from './store.ts'
import { addendaOf } from './terms-store.ts'

/** What other areas may ask of an engagement's terms: its config versions and the addenda its client signed. */
export interface EngagementTerms {
  /** The engagement's current config (the defaults while it has no version), in `db` or a transaction. */
  configOf(db: RentalDb, engagementId: string): Promise<EngagementConfig>
  /**
   * The client's engagement with its current config, in one read (in `at.trx` when given; `lock`
   * takes the engagement FOR UPDATE, 'share' FOR SHARE); undefined when not the organization's.
   * `revoked`: also whether the client revoked the engagement's agent, in the same read
   * (`agentRevoked`; false when not asked). `names`: also its job's title and its agent's name in
   * both languages (`names`; undefined when not asked). `cardUrl`: also its agent's A2A card URL,
   * the catalogue's (`cardUrl`, null when not there; absent when not asked). `listing`: also its
   * agent's latest listing id when that listing is `limited` (`limitedListingId`, else null; absent
   * when not asked), for the market's capacity check.
   */
  termsOf(
    orgId: string,
    id: string,
    at?: {
      trx?: RentalDb
      lock?: boolean | 'share'
      revoked?: boolean
      names?: boolean
      cardUrl?: boolean
      listing?: boolean
    },
  ): Promise<
    | {
        engagement: EngagementRow
        config: EngagementConfig
        agentRevoked: boolean
        names?: CatalogueNames | undefined
        cardUrl?: string | null
        limitedListingId?: string | null
      }
    | undefined
  >
  /** 409 `task_price_over_limit` when the engagement's task price exceeds its `max_task_price_fils`. */
  checkTaskPrice(engagement: EngagementRow, config: EngagementConfig): void
  /** The engagement's signed addenda (agent versions accepted), oldest first, with bodies and signatures (the export). */
  addendaOf(engagementId: string): Promise<
    Array<{
      from_version: string | null
      to_version: string
      card_hash: string
      body: unknown
      hash: string
      signature: string
      receipt_id: string
      accepted_at: string
    }>
  >
}

export const engagementTerms = (ctx: RentalContext): EngagementTerms => ({
  configOf: async (db, id) => (await configOf(ctx, db, id)).config,
  async termsOf(orgId, id, at) {
    const found = await engagementWithConfig(at?.trx ?? ctx.db, id, {
      orgId,
      lock: at?.lock,
      revoked: at?.revoked,
      names: at?.names,
      cardUrl: at?.cardUrl,
      listing: at?.listing,
    })
    return (
      found && {
        engagement: found.engagement,
        config: configFrom(ctx, found).config,
        agentRevoked: found.agentRevoked,
        names: found.names,
        ...('cardUrl' in found ? { cardUrl: found.cardUrl } : {}),
        ...('limitedListingId' in found ? { limitedListingId: found.limitedListingId } : {}),
      }
    )
  },
  checkTaskPrice: (engagement, config) => checkTaskPrice(config, Number(engagement.price_fils)),
  addendaOf: async (engagementId) =>
    (await addendaOf(ctx.db, engagementId)).map((a) => ({
      from_version: a.from_version,
      to_version: a.to_version,
      card_hash: a.card_hash,
      body: a.body,
      hash: a.hash,
      signature: a.signature,
      receipt_id: a.receipt_id,
      accepted_at: a.accepted_at.toISOString(),
    })),
})
