import { randomBytes } from 'node:crypto'
import type { Sealer } from '@svc/kit'
import type { IdpDb } from '../../db.ts'
import { newUserKey } from '../identity/index.ts'
import { hashPassword, verifyPassword } from './passwords.ts'
import {
  insertEvent,
  insertUser,
  liveAccount,
  namesOf,
  setDisabledAt,
  userByEmail,
  userById,
  userIdByDid,
} from './store.ts'

export const DEMO_EMAIL = 'demo@svc.local'

const id = (prefix: string) => `${prefix}${randomBytes(12).toString('base64url')}`

/** The account behind an email and password, or undefined; unknown emails take as long as wrong passwords. */
export async function authenticate(db: IdpDb, email: string, password: string) {
  const user = await userByEmail(db, email)
  const ok = await verifyPassword(user?.password_hash, password)
  return ok ? user : undefined
}

export async function createUser(
  db: IdpDb,
  sealer: Sealer,
  input: { email: string; password: string; name?: string; verified?: boolean },
) {
  const userId = id('usr_')
  await insertUser(db, {
    id: userId,
    email: input.email,
    name: input.name ?? null,
    email_verified_at: input.verified ? new Date() : null,
    password_hash: await hashPassword(input.password),
    ...newUserKey(sealer, userId),
  })
  return userId
}

/** The development demo account (never in production), with its password from the data directory. */
export async function ensureDemoUser(db: IdpDb, sealer: Sealer, password: string): Promise<void> {
  if (await userByEmail(db, DEMO_EMAIL)) return
  await createUser(db, sealer, { email: DEMO_EMAIL, password, name: 'Demo User', verified: true })
}

export async function recordEvent(
  db: IdpDb,
  userId: string,
  type: string,
  context: { ip?: string; userAgent?: string },
) {
  await insertEvent(db, {
    id: id('sev_'),
    user_id: userId,
    type,
    ip: context.ip ?? null,
    user_agent: context.userAgent?.slice(0, 300) ?? null,
  })
}

/** Where a request came from, for the account's security activity. */
export const requestContext = (request: { ip: string; headers: Record<string, unknown> }) => ({
  ip: request.ip,
  ...(typeof request.headers['user-agent'] === 'string' ? { userAgent: request.headers['user-agent'] } : {}),
})

export type { UserRow } from './store.ts'

/** What other areas may ask of accounts (in the caller's db or transaction). */
export const accountsService = {
  byId: userById,
  /** The address and name of each of these accounts. */
  namesOf,
  /** A live account (neither deleted nor disabled), by id or by DID. */
  live: liveAccount,
  /** By address, whatever its case. */
  byEmail: userByEmail,
  /** The id of the account whose did:key this is (deleted or not), or undefined. */
  idByDid: userIdByDid,
  /** Sets or clears the admin's disabled mark on a live account; answers the row, or undefined. */
  setDisabledAt,
}
