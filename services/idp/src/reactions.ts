import type { Reactions } from '@svc/kit'
import type { IdpDb } from './db.ts'

/** What an area tells, in its transaction, for other areas to react to (`ctx.reactions.on` in their mount). */
export interface IdpReactionTypes {
  /** The user withdrew a client's consent (the account page): the token area ends the client's refresh families. */
  'consent.withdrawn': (trx: IdpDb, event: { userId: string; clientId: string }) => Promise<unknown>
  /**
   * The lifecycle asks which clients know the user (it consented to them, or they got tokens for
   * it): the authorization, token and device areas each add theirs to `clientIds`.
   */
  'user.clients': (trx: IdpDb, event: { userId: string; clientIds: Set<string> }) => Promise<unknown>
}

export type IdpReactions = Reactions<IdpReactionTypes>
