import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { Database } from '@svc/kit'
import { freshDatabase } from '@svc/kit/testing'
import { sql } from 'kysely'
import { migrateUpTo } from '../support/migrations.ts'

describe('rental migration 0013: what each subject owned moves to an organization of its own', () => {
  let database: Database
  after(async () => database?.close())

  it('backfills organizations, owners, owned rows and the wallet, keeping balances and grant keys', async () => {
    database = await freshDatabase('orgs_migration')
    await migrateUpTo(database, '0012_task_cancel.sql')
    const db = database.db
    await sql`insert into console_sessions (id_hash, subject, csrf_token_hash, expires_at)
      values (decode(repeat('ab', 32), 'hex'), 'usr_alice', '\\x00', now() + interval '1 hour')`.execute(db)
    await sql`insert into api_tokens (id, owner_subject, label, token_hash, prefix, scopes)
      values ('tok_1', 'usr_alice', 'old', decode(repeat('01', 32), 'hex'), 'agt_abcd', '{tasks:read}'),
             ('tok_2', 'usr_bob', 'old', decode(repeat('02', 32), 'hex'), 'agt_efgh', '{tasks:read}')`.execute(
      db,
    )
    await sql`insert into agent_revocations (client_subject, agent_did, reason) values ('usr_bob', 'did:key:z6Mk', 'x')`.execute(
      db,
    )
    await sql`insert into rail_accounts (id, kind, allow_negative) values ('external:funding', 'external', true), ('wallet:usr_alice', 'wallet', false)`.execute(
      db,
    )
    await sql`insert into rail_transfers (id, idempotency_key, kind, request_digest) values ('trf_1', 'wallet-grant:usr_alice', 'grant', 'd')`.execute(
      db,
    )
    await sql`insert into rail_postings (transfer_id, account_id, amount) values ('trf_1', 'external:funding', -500), ('trf_1', 'wallet:usr_alice', 500)`.execute(
      db,
    )

    await migrateUpTo(database, '0013_orgs.sql')

    const members = (
      await sql<{
        subject: string
        role: string
        org_id: string
      }>`select subject, role, org_id from org_members order by subject`.execute(db)
    ).rows
    assert.deepEqual(
      members.map((m) => [m.subject, m.role]),
      [
        ['usr_alice', 'owner'],
        ['usr_bob', 'owner'],
      ],
    )
    const [alice, bob] = members.map((m) => m.org_id)
    assert.notEqual(alice, bob)
    const tokens = (
      await sql<{ id: string; org_id: string }>`select id, org_id from api_tokens order by id`.execute(db)
    ).rows
    assert.deepEqual(tokens, [
      { id: 'tok_1', org_id: alice },
      { id: 'tok_2', org_id: bob },
    ])
    const revoked = (await sql<{ org_id: string }>`select org_id from agent_revocations`.execute(db)).rows
    assert.deepEqual(revoked, [{ org_id: bob }])
    const wallet = (
      await sql<{
        account_id: string
        amount: string
      }>`select account_id, amount::text from rail_postings where amount > 0`.execute(db)
    ).rows
    assert.deepEqual(wallet, [{ account_id: `wallet:${alice}`, amount: '500' }])
    const grant = (
      await sql<{ idempotency_key: string }>`select idempotency_key from rail_transfers`.execute(db)
    ).rows
    assert.deepEqual(grant, [{ idempotency_key: `wallet-grant:${alice}` }])
    const old = (
      await sql<{
        n: number
      }>`select count(*)::int as n from rail_accounts where id = 'wallet:usr_alice'`.execute(db)
    ).rows
    assert.deepEqual(old, [{ n: 0 }])
  })
})
