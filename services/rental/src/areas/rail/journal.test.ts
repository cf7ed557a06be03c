import assert from 'node:assert/strict'
import { fileURLToPath } from 'node:url'
import { after, before, describe, it } from 'node:test'
import { type AppError, type Database, migrate } from '@svc/kit'
import { freshDatabase } from '@svc/kit/testing'
import type { Kysely } from 'kysely'
import type { RentalTables } from '../../db.ts'
import { JournalRail } from './journal.ts'

const MIGRATIONS = fileURLToPath(new URL('../../../migrations', import.meta.url))

describe('the built-in rail: a double-entry journal', () => {
  let database: Database
  let db: Kysely<RentalTables>
  const rail = new JournalRail()
  const inTransaction = <T>(work: (trx: Kysely<RentalTables>) => Promise<T>) => db.transaction().execute(work)
  const fund = (key: string, amount: number) =>
    inTransaction((trx) =>
      rail.transfer(trx, {
        idempotencyKey: key,
        kind: 'wallet_grant',
        postings: [
          { account: 'external:funding', amount: -amount },
          { account: 'wallet:alice', amount },
        ],
      }),
    )

  before(async () => {
    database = await freshDatabase('rail')
    await migrate(database, MIGRATIONS)
    db = database.db as Kysely<RentalTables>
  })
  after(async () => database.close())

  it('moves money once per idempotency key, however many times and however concurrently it is asked', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => fund('fund-1', 10_000)))
    assert.equal(new Set(answers.map((a) => a.id)).size, 1)
    assert.equal(answers.filter((a) => !a.replayed).length, 1)
    assert.equal(await rail.balance(db, 'wallet:alice'), 10_000)
    assert.equal(await rail.balance(db, 'external:funding'), -10_000)
  })

  it('refuses the same key for another transfer', async () => {
    await assert.rejects(
      fund('fund-1', 5),
      (err: AppError) => err.status === 409 && err.code === 'idempotency_key_reused',
    )
  })

  it('refuses unbalanced, fractional or single postings before anything is written', async () => {
    for (const postings of [
      [
        { account: 'wallet:alice', amount: -5 },
        { account: 'escrow:esc_1', amount: 4 },
      ],
      [
        { account: 'wallet:alice', amount: -0.5 },
        { account: 'escrow:esc_1', amount: 0.5 },
      ],
      [{ account: 'wallet:alice', amount: 0 }],
      [
        { account: 'nowhere:x', amount: -1 },
        { account: 'escrow:esc_1', amount: 1 },
      ],
    ])
      await assert.rejects(
        inTransaction((trx) =>
          rail.transfer(trx, { idempotencyKey: `bad-${Math.random()}`, kind: 'hold', postings }),
        ),
        (err: AppError) => err.status === 400,
      )
  })

  it('refuses to overdraw a wallet, and the failed transfer leaves no trace', async () => {
    const hold = (key: string, amount: number) =>
      inTransaction((trx) =>
        rail.transfer(trx, {
          idempotencyKey: key,
          kind: 'hold',
          postings: [
            { account: 'wallet:alice', amount: -amount },
            { account: 'escrow:esc_1', amount },
          ],
        }),
      )
    await assert.rejects(hold('hold-1', 10_001), (err: AppError) => err.code === 'insufficient_funds')
    assert.equal(await rail.balance(db, 'wallet:alice'), 10_000)
    // the refused key is free: nothing of that transfer was kept
    const held = await hold('hold-1', 2_500)
    assert.equal(held.replayed, false)
    assert.equal(await rail.balance(db, 'escrow:esc_1'), 2_500)
    assert.equal(await rail.balance(db, 'wallet:alice'), 7_500)
  })

  it('lets money in or out only through the named external accounts, by their kinds and counterparts (409 transfer_not_allowed)', async () => {
    const move = (kind: string, postings: Array<{ account: string; amount: number }>) =>
      inTransaction((trx) => rail.transfer(trx, { idempotencyKey: `rule-${Math.random()}`, kind, postings }))
    const refusals: Array<[string, Array<{ account: string; amount: number }>, RegExp]> = [
      // the old insurance reserve, or any external account the rule does not name, is no source
      [
        'insurance_claim',
        [
          { account: 'external:insurance_reserve', amount: -1 },
          { account: 'wallet:alice', amount: 1 },
        ],
        /external:insurance_reserve is not a source or sink of money/,
      ],
      // funding is debited only by funding kinds, and only into wallets
      [
        'insurance_claim',
        [
          { account: 'external:funding', amount: -1 },
          { account: 'wallet:alice', amount: 1 },
        ],
        /may not take money from external:funding/,
      ],
      [
        'wallet_grant',
        [
          { account: 'external:funding', amount: -1 },
          { account: 'payout:did:key:z6Mk', amount: 1 },
        ],
        /only to or from wallet accounts/,
      ],
      // payouts leave only from a provider's payout account, and never come back in
      [
        'provider_payout',
        [
          { account: 'wallet:alice', amount: -1 },
          { account: 'external:payouts', amount: 1 },
        ],
        /only to or from payout accounts/,
      ],
      [
        'provider_payout',
        [
          { account: 'external:payouts', amount: -1 },
          { account: 'payout:did:key:z6Mk', amount: 1 },
        ],
        /may not take money from external:payouts/,
      ],
      [
        'wallet_grant',
        [
          { account: 'external:funding', amount: -2 },
          { account: 'external:payouts', amount: 1 },
          { account: 'wallet:alice', amount: 1 },
        ],
        /at most one external account/,
      ],
    ]
    for (const [kind, postings, message] of refusals)
      await assert.rejects(
        move(kind, postings),
        (err: AppError) =>
          err.status === 409 && err.code === 'transfer_not_allowed' && message.test(err.message),
        `${kind} ${JSON.stringify(postings)}`,
      )
    // a platform account (the insurance pool) never goes below zero
    await assert.rejects(
      move('insurance_claim', [
        { account: 'platform:insurance', amount: -1 },
        { account: 'wallet:alice', amount: 1 },
      ]),
      (err: AppError) => err.code === 'insufficient_funds',
    )
    assert.equal(await rail.balance(db, 'external:insurance_reserve'), 0)
    assert.equal(await rail.balance(db, 'platform:insurance'), 0)
  })

  it('is balanced by the database itself: an unbalanced posting cannot commit', async () => {
    await assert.rejects(
      inTransaction(async (trx) => {
        await trx
          .insertInto('rail_transfers')
          .values({
            id: 'rtr_forged',
            idempotency_key: 'forged',
            kind: 'forged',
            request_digest: '-',
            memo: '{}',
          })
          .execute()
        await trx
          .insertInto('rail_postings')
          .values({ transfer_id: 'rtr_forged', account_id: 'wallet:alice', amount: 1 })
          .execute()
      }),
      /does not balance/,
    )
    assert.equal(await rail.balance(db, 'wallet:alice'), 7_500)
  })
  it('reads a period: the balance before a time, and the transfers in [from, to) touching accounts', async () => {
    const before = new Date()
    await fund('fund-2', 1_000)
    const after = new Date(Date.now() + 1000)
    assert.equal(await rail.balanceBefore(db, ['wallet:alice'], before), 7_500)
    assert.equal(await rail.balanceBefore(db, ['wallet:alice'], after), 8_500)
    assert.equal(await rail.balanceBefore(db, ['wallet:alice', 'escrow:esc_1'], after), 11_000)
    assert.equal(await rail.balanceBefore(db, [], after), 0)
    const moved = await rail.transfersTouching(db, ['wallet:alice'], before, after)
    assert.deepEqual(
      moved.map((t) => [t.kind, t.postings]),
      [
        [
          'wallet_grant',
          [
            { account: 'external:funding', amount: -1_000 },
            { account: 'wallet:alice', amount: 1_000 },
          ],
        ],
      ],
    )
    assert.deepEqual(await rail.transfersTouching(db, ['escrow:esc_1'], before, after), [])
    assert.equal((await rail.transfersTouching(db, ['escrow:esc_1'], new Date(0), after)).length, 1)
  })
})
