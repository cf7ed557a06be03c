import type { IdpDb } from '../../db.ts'
import { authorizeService } from '../authorize/index.ts'
import { clientsService } from '../clients/index.ts'
import { sessionsService } from '../sessions/index.ts'
import { tasksService } from '../tasks/index.ts'
import { eventsToExport, userById } from '../accounts/index.ts'

/** The account's consents, each with its client's name. */
async function consentsWithNames(db: IdpDb, userId: string) {
  const consents = await authorizeService.consentsToExport(db, userId)
  const ids = consents.map((consent) => consent.client_id)
  const names = new Map(
    (await clientsService.anyAmong(db, ids, ['client_id', 'client_name'])).map((c) => [
      c.client_id,
      c.client_name,
    ]),
  )
  return consents.flatMap(({ client_id, granted, updated_at }) =>
    names.has(client_id) ? [{ client_id, client_name: names.get(client_id)!, granted, updated_at }] : [],
  )
}

/** Everything the idp keeps about an account, for the user to take away (never a password hash or a token). */
export async function exportAccount(db: IdpDb, userId: string) {
  const user = await userById(db, userId)
  if (!user) throw new Error(`no account ${userId} to export`)
  const sessions = await sessionsService.toExport(db, userId)
  const events = await eventsToExport(db, userId)
  const consents = await consentsWithNames(db, userId)
  const taskGrants = await tasksService.allOf(db, userId)
  return {
    format: 'svc-account-export/v1',
    exported_at: new Date().toISOString(),
    account: {
      id: user.id,
      email: user.email,
      email_verified: user.email_verified_at !== null,
      name: user.name,
      has_password: user.password_hash !== null,
      created_at: user.created_at.toISOString(),
    },
    sessions,
    security_events: events,
    consents,
    task_grants: taskGrants,
  }
}
