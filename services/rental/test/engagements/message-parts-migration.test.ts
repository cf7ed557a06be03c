import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import type { Database } from '@svc/kit'
import { freshDatabase } from '@svc/kit/testing'
import { sql } from 'kysely'
import { migrateUpTo } from '../support/migrations.ts'

describe('rental migration 0056: what each engagement adds to its tasks’ message, kept with it', () => {
  let database: Database
  after(async () => database?.close())

  it('backfills each engagement’s parts from its connection and web policy (an egress policy is none)', async () => {
    database = await freshDatabase('message_parts_migration')
    await migrateUpTo(database, '0055_task_trace.sql')
    const db = database.db
    await sql`insert into orgs (id, name) values ('org_a', 'A')`.execute(db)
    await sql`insert into jobs (id, title, profile, outcome, price_fils)
      values ('job_x', 'X', 'p', 'o', 100)`.execute(db)
    for (const id of ['eng_none', 'eng_conn', 'eng_web', 'eng_both', 'eng_egress'])
      await sql`insert into engagements (id, org_id, client_did, job_id, agent_id, agent_did, provider_did,
        price_fils, state, sla, sla_hash)
        values (${id}, 'org_a', 'did:key:c', 'job_x', 'agt_1', 'did:key:a', 'did:key:p', 100, 'active',
        '{}'::jsonb, ${`sha256:${id}`})`.execute(db)
    for (const engagement of ['eng_conn', 'eng_both'])
      await sql`insert into connections (id, org_id, engagement_id, url, auth_mode, key_sealed, key_hint,
        tools, allowed, created_at)
        values (${`con_${engagement}`}, 'org_a', ${engagement}, 'https://tools.example/mcp', 'api_key',
        '\\x00', '…abcd', '[]'::jsonb, '[]'::jsonb, now())`.execute(db)
    const policy = (engagement: string, kind: string, version: number) =>
      sql`insert into rental_engagement_policies (engagement_id, kind, version, org_id, policy, actor)
        values (${engagement}, ${kind}, ${version}, 'org_a', '{}'::jsonb, 'usr_a')`.execute(db)
    await policy('eng_web', 'web', 1)
    await policy('eng_web', 'web', 2)
    await policy('eng_both', 'web', 1)
    await policy('eng_egress', 'egress', 1)

    await migrateUpTo(database, '0056_engagement_message_parts.sql')

    const { rows } = await sql<{
      id: string
      message_parts: string[]
    }>`select id, message_parts from engagements order by id`.execute(db)
    assert.deepEqual(
      rows.map((r) => [r.id, [...r.message_parts].sort()]),
      [
        ['eng_both', ['connection', 'web_policy']],
        ['eng_conn', ['connection']],
        ['eng_egress', []],
        ['eng_none', []],
        ['eng_web', ['web_policy']],
      ],
    )
  })
})
