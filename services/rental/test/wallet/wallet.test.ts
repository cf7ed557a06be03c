import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually, signIn, startStack, type Stack } from '../support/stack.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface Wallet {
  balance: Money
  funding: { mode: 'demo' | 'none'; max_top_up: Money | null }
}

describe('the wallet: its balance, and demo top-ups from external:funding', () => {
  let stack: FullStack
  before(async () => {
    stack = await startFullStack()
  })
  after(async () => stack.close())

  const wallet = async (who = stack.alice) => {
    const res = await stack.call(who, 'GET', '/api/wallet?lang=en')
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Wallet
  }
  const topUp = (body: unknown, key?: string, who = stack.alice) =>
    stack.call(who, 'POST', '/api/wallet/top-ups', body, key ? { headers: { 'idempotency-key': key } } : {})

  it('says a top-up here is demo money, and its limit', async () => {
    const w = await wallet()
    assert.equal(w.funding.mode, 'demo')
    assert.equal(w.funding.max_top_up?.amount_fils, 500_000)
  })

  it('refuses bad input with 4XX and moves no money', async () => {
    const before = (await wallet()).balance.amount_fils
    for (const [body, key] of [
      [{ amount_fils: 0 }, 'k-zero'],
      [{ amount_fils: -5 }, 'k-negative'],
      [{ amount_fils: 500_001 }, 'k-over'],
      [{ amount_fils: 1.5 }, 'k-fraction'],
      [{ amount_fils: '100' }, 'k-string'],
      [{ amount_fils: 100, extra: true }, 'k-extra'],
      [{}, 'k-empty'],
      [{ amount_fils: 100 }, undefined],
    ] as const) {
      const res = await topUp(body, key)
      assert.equal(res.status, 400, `${JSON.stringify(body)} ${key}: ${res.text}`)
    }
    const noCsrf = await stack.call(
      stack.alice,
      'POST',
      '/api/wallet/top-ups',
      { amount_fils: 100 },
      {
        csrf: false,
        headers: { 'idempotency-key': 'k-csrf' },
      },
    )
    assert.equal(noCsrf.status, 403, noCsrf.text)
    assert.equal((await wallet()).balance.amount_fils, before)
  })

  it('adds the amount once per key, with a wallet.funded receipt, from external:funding only', async () => {
    const before = (await wallet()).balance.amount_fils
    const first = await topUp({ amount_fils: 12_345 }, 'top-up-1')
    assert.equal(first.status, 201, first.text)
    assert.equal(first.body.demo, true)
    assert.equal((first.body.amount as Money).amount_fils, 12_345)
    assert.equal((first.body.balance as Money).amount_fils, before + 12_345)
    const again = await topUp({ amount_fils: 12_345 }, 'top-up-1')
    assert.equal(again.status, 201, again.text)
    assert.equal(again.headers.get('idempotent-replayed'), 'true')
    assert.deepEqual(again.body, first.body)
    const reused = await topUp({ amount_fils: 99 }, 'top-up-1')
    assert.equal(reused.status, 422, reused.text)
    assert.equal((await wallet()).balance.amount_fils, before + 12_345)
    // on the rail: one wallet_funding transfer, from external:funding into this wallet
    const postings = await sql<{ account_id: string; amount: string; kind: string }>`
      select p.account_id, p.amount, t.kind from rail_postings p join rail_transfers t on t.id = p.transfer_id
      where p.transfer_id = ${first.body.id as string} order by p.amount`.execute(stack.db)
    assert.deepEqual(
      postings.rows.map((r) => [r.account_id, Number(r.amount), r.kind]),
      [
        ['external:funding', -12_345, 'wallet_funding'],
        [`wallet:${stack.alice.me.organization.id}`, 12_345, 'wallet_funding'],
      ],
    )
    const receipt = first.body.receipt as { id: string; leaf_hash: string }
    const outbox = await sql<{ receipt_type: string }>`
      select receipt_type from receipt_outbox where id = ${receipt.id}`.execute(stack.db)
    assert.equal(outbox.rows[0]?.receipt_type, 'wallet.funded')
    // the statement shows it as a funding line
    const statement = await stack.call(stack.alice, 'GET', '/api/statements')
    const lines = statement.body.movements as Array<{ transfer_id: string; kind: string }>
    assert.equal(lines.find((l) => l.transfer_id === first.body.id)?.kind, 'funding')
  })

  it('tops up only the caller’s own wallet: another organization’s balance does not move', async () => {
    const bobBefore = (await wallet(stack.bob)).balance.amount_fils
    const same = await topUp({ amount_fils: 700 }, 'top-up-1', stack.bob)
    assert.equal(same.status, 201, same.text)
    assert.notEqual(same.body.id, undefined)
    assert.equal((await wallet(stack.bob)).balance.amount_fils, bobBefore + 700)
  })

  it('lists a batch’s items page by page with their tasks; another organization’s batch is 404', async () => {
    const did = await stack.agentOf('job_summary')
    const engagement = await stack.hireAndSign(stack.alice, 'job_summary', did, stack.newClientKey())
    const made = await stack.call(stack.alice, 'POST', '/api/batches', {
      engagement_id: engagement,
      items: ['First text to summarise.', 'Second text to summarise.', 'Third text to summarise.'],
    })
    assert.equal(made.status, 201, made.text)
    const id = made.body.id as string
    await eventually('every item has its task', async () => {
      const page = await stack.call(stack.alice, 'GET', `/api/batches/${id}/items`)
      return (page.body.items as Array<{ task_id: string | null }>).every((i) => i.task_id !== null)
    })
    const first = await stack.call(stack.alice, 'GET', `/api/batches/${id}/items?limit=2`)
    assert.equal(first.status, 200, first.text)
    const items = first.body.items as Array<{ index: number; task_id: string; input_preview: string }>
    assert.deepEqual(
      items.map((i) => i.index),
      [0, 1],
    )
    // each item named by its text's first words (a person reads which task it is)
    assert.deepEqual(
      items.map((i) => i.input_preview),
      ['First text to summarise.', 'Second text to summarise.'],
    )
    assert.equal(first.body.next_from, 2)
    const rest = await stack.call(stack.alice, 'GET', `/api/batches/${id}/items?from=2&limit=2`)
    assert.deepEqual(
      (rest.body.items as Array<{ index: number }>).map((i) => i.index),
      [2],
    )
    assert.equal(rest.body.next_from, null)
    const task = await stack.call(stack.alice, 'GET', `/api/tasks/${items[0]!.task_id}`)
    assert.equal(task.status, 200, task.text)
    for (const query of ['limit=0', 'limit=101', 'from=-1', 'from=x', 'other=1']) {
      const bad = await stack.call(stack.alice, 'GET', `/api/batches/${id}/items?${query}`)
      assert.equal(bad.status, 400, `${query}: ${bad.text}`)
    }
    const theirs = await stack.call(stack.bob, 'GET', `/api/batches/${id}/items`)
    assert.equal(theirs.status, 404, theirs.text)
    assert.equal((theirs.body.error as { code: string }).code, 'batch_not_found')
  })
})

describe('the wallet where no funding is configured (the demo grant off, as in production)', () => {
  let stack: Stack
  before(async () => {
    stack = await startStack({ RENTAL_DEMO_WALLET_FILS: '0' })
  })
  after(async () => stack.close())

  it('says so, and refuses a top-up with 409 funding_unavailable', async () => {
    const alice = await signIn(stack)
    const got = await alice.jar.fetch(`${stack.rental.url}/api/wallet`)
    const w = (await got.json()) as Wallet
    assert.equal(w.funding.mode, 'none')
    assert.equal(w.funding.max_top_up, null)
    const res = await alice.jar.fetch(`${stack.rental.url}/api/wallet/top-ups`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': alice.csrf, 'idempotency-key': 'k1' },
      body: JSON.stringify({ amount_fils: 100 }),
    })
    assert.equal(res.status, 409)
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'funding_unavailable')
  })
})
