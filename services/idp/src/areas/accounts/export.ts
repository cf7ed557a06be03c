import type { IdpDb } from '../../db.ts'
import { authorizeService } from '../authorize/service.ts'
import { sessionsService } from '../sessions/index.ts'
import { tasksService } from '../tasks/service.ts'
import { eventsToExport, userById } from './store.ts'

/** Everything the idp keeps about an account, for the user to take away (never a password hash or a token). */
export async function exportAccount(db: IdpDb, userId: string) {
  const user = await userById(db, userId)
  if (!user) throw new Error(`no account ${userId} to export`)
  const sessions = await sessionsService.toExport(db, userId)
  const events = await eventsToExport(db, userId)
  const consents = await authorizeService.consentsToExport(db, userId)
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
