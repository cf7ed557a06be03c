import type { IdpDb } from '../../db.ts'

/** Everything the idp keeps about an account, for the user to take away (never a password hash or a token). */
export async function exportAccount(db: IdpDb, userId: string) {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirstOrThrow()
  const sessions = await db
    .selectFrom('sessions')
    .select(['sid', 'amr', 'acr', 'auth_time', 'created_at', 'expires_at', 'ended_at', 'ip', 'user_agent'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
  const events = await db
    .selectFrom('security_events')
    .select(['type', 'ip', 'user_agent', 'created_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
  const consents = await db
    .selectFrom('consents')
    .innerJoin('clients', 'clients.client_id', 'consents.client_id')
    .select(['consents.client_id', 'clients.client_name', 'consents.granted', 'consents.updated_at'])
    .where('consents.user_id', '=', userId)
    .execute()
  const taskGrants = await db
    .selectFrom('task_grants')
    .select([
      'id',
      'client_id',
      'purpose',
      'max_uses',
      'uses',
      'ceiling',
      'resource',
      'created_at',
      'expires_at',
      'ended_at',
    ])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute()
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
