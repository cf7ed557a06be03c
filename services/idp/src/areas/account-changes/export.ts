import type { IdpDb } from '../../db.ts'
import type { AuthorizeService } from '../authorize/index.ts'
import type { ClientsService } from '../clients/index.ts'
import type { SessionsService } from '../sessions/index.ts'
import type { TasksService } from '../tasks/index.ts'
import { eventsToExport, userById } from '../accounts/index.ts'

/** The areas an account's export gathers from, besides the accounts' own tables. */
export interface ExportDeps {
  db: IdpDb
  authorize: AuthorizeService
  clients: ClientsService
  sessions: SessionsService
  tasks: TasksService
}

/** The account's consents, each with its client's name. */
async function consentsWithNames({ db, authorize, clients }: ExportDeps, userId: string) {
  const consents = await authorize.consentsToExport(db, userId)
  const ids = consents.map((consent) => consent.client_id)
  const names = new Map(
    (await clients.anyAmong(db, ids, ['client_id', 'client_name'])).map((c) => [c.client_id, c.client_name]),
  )
  return consents.flatMap(({ client_id, granted, updated_at }) =>
    names.has(client_id) ? [{ client_id, client_name: names.get(client_id)!, granted, updated_at }] : [],
  )
}

/** Everything the idp keeps about an account, for the user to take away (never a password hash or a token). */
export async function exportAccount(deps: ExportDeps, userId: string) {
  const { db } = deps
  const user = await userById(db, userId)
  if (!user) throw new Error(`no account ${userId} to export`)
  const sessions = await deps.sessions.toExport(db, userId)
  const events = await eventsToExport(db, userId)
  const consents = await consentsWithNames(deps, userId)
  const taskGrants = await deps.tasks.allOf(db, userId)
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
