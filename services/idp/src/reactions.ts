import { Reactions } from '@svc/kit'
import type { IdpDb } from './db.ts'

/** What an area tells, in its transaction, for other areas to react to (`ctx.reactions.on` in their mount). */
export interface IdpEvents {
  /** The user withdrew a client's consent (the account page): the token area ends the client's refresh families. */
  'consent.withdrawn': { userId: string; clientId: string }
}

export type IdpReactions = Reactions<IdpEvents, IdpDb>

export const idpReactions = (): IdpReactions => new Reactions<IdpEvents, IdpDb>()
