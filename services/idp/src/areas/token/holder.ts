import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { isDenied } from '../../oauth/denylist.ts'
import { type PresentedTokenDeps, presentedToken } from '../../oauth/presented-token.ts'
import type { GrantAreas } from './grants.ts'

/** What the holder of a token is looked up in: the database and the areas that say whether it stands. */
export type HolderDeps = { db: IdpDb } & Pick<
  GrantAreas,
  'accounts' | 'authorize' | 'clients' | 'sessions' | 'tasks'
>

type Actor = { sub?: unknown; act?: Actor }

/** The client the user authorized: the token's client, or for a delegated token the first actor (RFC 8693 §4.1). */
function authorizedClient(payload: Record<string, unknown>) {
  let actor = payload.act as Actor | undefined
  if (!actor) return payload.client_id
  while (actor.act) actor = actor.act
  return actor.sub
}

/**
 * The account and client behind a verified user access token, while it still stands: its session
 * live (the token names its session, not the user: a pairwise `sub` cannot be turned back into an
 * account), its task grant (if any) not ended by the user and, for a third-party client, the user's
 * consent not withdrawn. Undefined otherwise.
 */
export async function tokenHolder(deps: HolderDeps, payload: Record<string, unknown>) {
  const { db } = deps
  const clientId = authorizedClient(payload)
  if (typeof payload.sid !== 'string' || typeof clientId !== 'string') return undefined
  const session = await deps.sessions.liveUserOf(db, payload.sid)
  const client = await deps.clients.live(db, clientId, ['client_id', 'first_party', 'organization_id'])
  const user = session && client ? await deps.accounts.byId(db, session.user_id) : undefined
  if (!user || !client || user.disabled_at) return undefined
  // a token under a task grant the user ended stops with it
  const taskId = (payload.tsk as { id?: unknown } | undefined)?.id
  if (typeof taskId === 'string' && (await deps.tasks.byId(db, taskId))?.ended_at) return undefined
  if (client.first_party) return { user, client, consent: undefined }
  const consent = await deps.authorize.consentOf(db, user.id, client.client_id)
  if (!consent.granted_at) return undefined
  return { user, client, consent }
}

/**
 * The user behind the request's access token (RFC 6750 §2.1, RFC 9449 §7): a live token of ours,
 * not revoked, issued for a user whose session and consent still stand. Refusals answer 401 with
 * a challenge in the scheme used.
 */
export async function userOfToken(
  deps: PresentedTokenDeps,
  holderOf: (payload: Record<string, unknown>) => ReturnType<typeof tokenHolder>,
  request: FastifyRequest,
) {
  const { payload, invalidToken } = await presentedToken(deps, request)
  if (await isDenied(deps.kv, payload.jti)) throw invalidToken('the access token was revoked')
  if (typeof payload.sid !== 'string')
    throw invalidToken('this access token was issued to a client for itself: there is no user')
  const holder = await holderOf(payload)
  if (!holder) throw invalidToken('the access token no longer stands for a signed-in user')
  return { payload, holder }
}
