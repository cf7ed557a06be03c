import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { b64uEncode } from '@svc/trust/base64url'
import { signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { sql } from 'kysely'
import { JournalRail } from '../../src/areas/rail/journal.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'

interface Money {
  amount_fils: number
  currency: string
  display: string
}
interface Movement {
  transfer_id: string
  transfer_kind: string
  kind: string
  at: string
  wallet: Money
  held: Money
  counter_account: string | null
  counter_account_kind: string | null
  escrow_id: string | null
  engagement_id: string | null
  task_id: string | null
  receipts: Array<{ type: string; leaf_hash: string }>
}
interface Statement {
  organization_id: string
  from: string
  to: string
  opening: { wallet: Money; held: Money }
  closing: { wallet: Money; held: Money }
  movements: Movement[]
  totals: Record<string, { count: number; wallet: Money; held: Money }>
  reconciles: boolean
}
interface Escrow {
  id: string
  hash: string
  body: unknown
  state: string
}
interface Pending {
  escrow: { id: string; hash: string }
  instruction: { amount_fils: number; fee_fils: number }
}

describe('statements: the wallet and its escrows over a period, traced to journal rows and receipts', () => {
  let stack: FullStack
  let did: string
  const key = () => stack.newClientKey()
  const rail = new JournalRail()
  const sum = (ms: Movement[], side: 'wallet' | 'held') => ms.reduce((acc, m) => acc + m[side].amount_fils, 0)

  const statement = async (who: Client, query: string) => {
    const res = await stack.call(who, 'GET', `/api/statements?${query}`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as Statement
  }
  const period = (from: Date, to: Date) =>
    `from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`
  /** The statement reconciles, and its closing is the wallet's (and the escrows') balance at `to`. */
  const checkReconciles = (s: Statement) => {
    assert.ok(s.reconciles)
    assert.equal(s.opening.wallet.amount_fils + sum(s.movements, 'wallet'), s.closing.wallet.amount_fils)
    assert.equal(s.opening.held.amount_fils + sum(s.movements, 'held'), s.closing.held.amount_fils)
  }

  /** Operations a client makes, each through HTTP as the console does. */
  const ops = (who: Client) => {
    const keys = new Map<string, ReturnType<typeof key>>()
    const engagements: string[] = []
    const completed: Array<{ engagement: string; task: string }> = []
    const released: string[] = []
    const sign = (engagement: string, body: unknown) =>
      b64uEncode(signEd25519(keys.get(engagement)!.seed, canonicalBytes(body)))
    return {
      engagements,
      completed,
      async hire() {
        const k = key()
        const id = await stack.hireAndSign(who, 'job_summary', did, k)
        keys.set(id, k)
        engagements.push(id)
      },
      async task(pick: number) {
        if (engagements.length === 0) return
        const engagement = engagements[pick % engagements.length]!
        const res = await stack.call(who, 'POST', '/api/tasks', {
          engagement_id: engagement,
          text: 'A statement lists every movement of money with its journal transfer and receipts.',
        })
        assert.equal(res.status, 200, res.text)
        const task = res.body.task as { id: string; state: string }
        assert.equal(task.state, 'completed', res.text)
        const escrow = res.body.escrow as Escrow | null
        if (escrow?.state === 'offered') {
          const signed = await stack.call(who, 'POST', `/api/engagements/${engagement}/signatures`, {
            escrow_signatures: [{ escrow_hash: escrow.hash, signature: sign(engagement, escrow.body) }],
          })
          assert.equal(signed.status, 200, signed.text)
        }
        completed.push({ engagement, task: task.id })
      },
      async release(pick: number) {
        if (completed.length === 0) return undefined
        const { engagement } = completed.splice(pick % completed.length, 1)[0]!
        const pending = await stack.call(who, 'GET', `/api/engagements/${engagement}/releases/pending`)
        const releases = pending.body.releases as Pending[]
        if (releases.length === 0) return undefined
        const r = releases[0]!
        const res = await stack.call(who, 'POST', `/api/engagements/${engagement}/releases`, {
          escrow_hash: r.escrow.hash,
          instruction: { body: r.instruction, signature: sign(engagement, r.instruction) },
        })
        assert.equal(res.status, 200, res.text)
        released.push((res.body.escrow as { task_id: string }).task_id)
        return res.body as {
          transfer: { id: string }
          receipt: { leaf_hash: string }
          escrow: { task_id: string }
        }
      },
      /** A refund of part of a released task, asked for by `who`, accepted and settled by `operator`. */
      async refund(pick: number, amountFils: number, operator: Client) {
        if (released.length === 0) return
        const task = released.splice(pick % released.length, 1)[0]!
        const asked = await stack.call(who, 'POST', '/api/refunds', {
          task_id: task,
          amount_fils: amountFils,
          reason: 'The summary missed a point.',
        })
        assert.equal(asked.status, 201, asked.text)
        const id = (asked.body as { id: string }).id
        for (const move of ['accept', 'approve']) {
          const res = await stack.call(operator, 'POST', `/api/refunds/${id}/${move}`, {})
          assert.equal(res.status, 200, `${move}: ${res.text}`)
        }
      },
    }
  }

  before(async () => {
    stack = await startFullStack()
    did = await stack.agentOf('job_summary')
  })
  after(async () => stack.close())

  it('after a hire, two tasks and a release: each movement with its journal transfer and receipts, reconciled', async () => {
    const start = new Date()
    const alice = ops(stack.alice)
    await alice.hire()
    await alice.task(0)
    await alice.task(0)
    const released = (await alice.release(0))!
    const end = new Date(Date.now() + 1000)
    const s = await statement(stack.alice, period(new Date(start.getTime() - 1000), end))
    checkReconciles(s)
    const org = stack.alice.me.organization.id
    const wallet = `wallet:${org}`
    assert.equal(s.closing.wallet.amount_fils, await rail.balance(stack.db, wallet))
    // every transfer that posts to the wallet is a line (or two), with its journal id
    const { rows } = await sql<{ id: string; kind: string; amount: string }>`
      select t.id, t.kind, p.amount from rail_transfers t join rail_postings p on p.transfer_id = t.id
      where p.account_id = ${wallet} order by t.created_at, t.id`.execute(stack.db)
    const walletLines = s.movements.filter((m) => m.wallet.amount_fils !== 0)
    assert.deepEqual(
      walletLines.map((m) => [m.transfer_id, m.wallet.amount_fils]),
      rows.map((r) => [r.id, Number(r.amount)]),
    )
    const kinds = s.movements.map((m) => m.kind)
    // the first sight's grant (only when this run funded the wallet), two holds, the release, its
    // fee and the VAT inside the price (to platform:vat)
    assert.deepEqual(
      kinds.filter((k) => k !== 'funding'),
      ['escrow_hold', 'escrow_hold', 'release', 'fee', 'vat'],
    )
    const release = s.movements.find((m) => m.kind === 'release')!
    const fee = s.movements.find((m) => m.kind === 'fee')!
    const vat = s.movements.find((m) => m.kind === 'vat')!
    assert.equal(vat.transfer_id, released.transfer.id)
    assert.equal(vat.counter_account, 'platform:vat')
    assert.equal(vat.held.amount_fils, -119)
    assert.equal(release.transfer_id, released.transfer.id)
    assert.equal(fee.transfer_id, released.transfer.id)
    assert.equal(release.counter_account_kind, 'payout')
    assert.equal(fee.counter_account_kind, 'platform')
    assert.equal(release.wallet.amount_fils, 0)
    const task = (await stack.call(stack.alice, 'GET', `/api/tasks/${released.escrow.task_id}`)).body as {
      receipt: { leaf_hash: string }
    }
    assert.deepEqual(release.receipts, [
      { type: 'escrow.released', leaf_hash: released.receipt.leaf_hash },
      { type: 'task.completed', leaf_hash: task.receipt.leaf_hash },
    ])
    assert.equal(release.task_id, released.escrow.task_id)
    assert.equal(-(release.held.amount_fils + fee.held.amount_fils + vat.held.amount_fils), 2500)
    assert.equal(fee.held.amount_fils, -250)
    assert.equal(s.totals.escrow_hold!.count, 2)
    assert.equal(s.totals.escrow_hold!.wallet.amount_fils, -5000)
    assert.equal(s.totals.fee!.held.display, '-AED\u00a02.50')
    // in Arabic: the same figures, displayed with Arabic digits
    const ar = await statement(stack.alice, `${period(new Date(start.getTime() - 1000), end)}&lang=ar`)
    assert.equal(ar.closing.wallet.amount_fils, s.closing.wallet.amount_fils)
    assert.match(ar.closing.wallet.display, /[٠-٩]/)

    // the CSV parses back (RFC 4180) to the same rows: opening, each movement, closing
    const csv = await stack.call(
      stack.alice,
      'GET',
      `/api/statements?${period(new Date(start.getTime() - 1000), end)}&format=csv`,
    )
    assert.equal(csv.status, 200, csv.text)
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/)
    assert.match(csv.text, /\r\n$/)
    // the writer guards cells a spreadsheet would read as a formula (a leading `-` too) with `'`
    const unguard = (v: string) => (/^'[=+\-@\t\r]/.test(v) ? v.slice(1) : v)
    const records = (parse(csv.text, { columns: true }) as Array<Record<string, string>>).map((r) =>
      Object.fromEntries(Object.entries(r).map(([k, v]) => [k, unguard(v)])),
    )
    assert.deepEqual(
      records.map((r) => [r.kind, r.transfer_id, Number(r.wallet_fils), Number(r.held_fils)]),
      [
        ['opening', '', s.opening.wallet.amount_fils, s.opening.held.amount_fils],
        ...s.movements.map((m) => [m.kind, m.transfer_id, m.wallet.amount_fils, m.held.amount_fils]),
        ['closing', '', s.closing.wallet.amount_fils, s.closing.held.amount_fils],
      ],
    )
    assert.match(csv.text, /,'-2500,/)
    assert.ok(
      records.find((r) => r.kind === 'release')!.receipt_leaf_hashes!.includes(released.receipt.leaf_hash),
    )
  })

  it('property: for random hires, tasks, releases and refunds and random period cuts, opening + movements = closing = the balance', async () => {
    const bob = ops(stack.bob)
    const wallet = `wallet:${stack.bob.me.organization.id}`
    const Op = fc.oneof(
      fc.constant({ op: 'hire' as const, pick: 0 }),
      fc.record({ op: fc.constant('task' as const), pick: fc.nat(5) }),
      fc.record({ op: fc.constant('release' as const), pick: fc.nat(5) }),
      fc.record({
        op: fc.constant('refund' as const),
        pick: fc.nat(5),
        fils: fc.integer({ min: 1, max: 500 }),
      }),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(Op, { minLength: 1, maxLength: 8 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 2, maxLength: 2 }),
        async (sequence, cuts) => {
          const start = new Date()
          const times: Date[] = [start]
          for (const step of sequence) {
            const { op, pick } = step
            if (op === 'hire') await bob.hire()
            else if (op === 'task') await bob.task(pick)
            else if (op === 'release') await bob.release(pick)
            // bob, the demo user, is also the development's operator: he settles his own refunds
            else await bob.refund(pick, step.fils, stack.bob)
            times.push(new Date())
          }
          const end = new Date(Date.now() + 1)
          const [a, b] = cuts
            .map((c) => new Date(start.getTime() + Math.floor(c * (end.getTime() - start.getTime()))))
            .sort((x, y) => x.getTime() - y.getTime()) as [Date, Date]
          const mid = b.getTime() > a.getTime() ? b : new Date(a.getTime() + 1)
          const whole = await statement(stack.bob, period(a, new Date(end.getTime() + 1)))
          const first = await statement(stack.bob, period(a, mid))
          const second = await statement(stack.bob, period(mid, new Date(end.getTime() + 1)))
          for (const s of [whole, first, second]) checkReconciles(s)
          // the cut splits the movements and chains the balances
          assert.deepEqual(first.closing, second.opening)
          assert.deepEqual(whole.opening, first.opening)
          assert.deepEqual(whole.closing, second.closing)
          assert.deepEqual(
            [...first.movements, ...second.movements].map((m) => [m.transfer_id, m.kind]),
            whole.movements.map((m) => [m.transfer_id, m.kind]),
          )
          // the closing is the wallet's balance now
          assert.equal(whole.closing.wallet.amount_fils, await rail.balance(stack.db, wallet))
        },
      ),
      {
        numRuns: 6,
        // one run surely refunds: a hire, a task, its release, a refund of part of it
        examples: [
          [
            [
              { op: 'hire', pick: 0 },
              { op: 'task', pick: 0 },
              { op: 'release', pick: 0 },
              { op: 'refund', pick: 0, fils: 125 },
            ],
            [0.3, 0.8],
          ],
        ],
      },
    )
  })

  it('another organization sees only its own wallet and escrows', async () => {
    const carol = await stack.signInWith('carol-statements@example.com')
    const s = await statement(carol, '')
    assert.equal(s.organization_id, carol.me.organization.id)
    assert.deepEqual(s.movements, [])
    assert.equal(s.closing.wallet.amount_fils, 0)
    const alice = await statement(stack.alice, '')
    const bob = await statement(stack.bob, '')
    const ids = new Set(alice.movements.map((m) => m.transfer_id))
    assert.ok(bob.movements.length > 0)
    assert.ok(bob.movements.every((m) => !ids.has(m.transfer_id)))
    assert.ok(
      alice.movements.every(
        (m) => m.escrow_id === null || !bob.movements.some((b) => b.escrow_id === m.escrow_id),
      ),
    )
  })

  it('bad from, to, format or lang: 400 naming the field', async () => {
    for (const [query, field] of [
      ['from=yesterday', 'from'],
      ['from=2026-02-30', 'from'],
      ['to=2026-13-01', 'to'],
      ['from=2026-03-01&to=2026-02-01', 'to'],
      ['from=2026-03-01&to=2026-03-01', 'to'],
      ['from=2024-01-01&to=2026-01-01', 'period'],
      ['format=xml', 'format'],
      ['lang=fr', 'lang'],
      ['from=2026-01-01T10:00:00', 'from'],
      ['extra=1', 'extra'],
    ] as const) {
      const res = await stack.call(stack.alice, 'GET', `/api/statements?${query}`)
      assert.equal(res.status, 400, `${query}: ${res.text}`)
      assert.match(JSON.stringify(res.body.error), new RegExp(field), query)
    }
  })
})
