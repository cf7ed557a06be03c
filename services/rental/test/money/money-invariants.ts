import { sql } from 'kysely'
import { checkInvoices } from './money-invoices.ts'
import type { World } from './money-model.ts'

/** The kinds of transfer that may post to a wallet, and which way. */
const INTO_WALLET = new Set([
  'wallet_grant',
  'wallet_funding',
  'escrow_return',
  'refund',
  'dispute_settlement',
  'sla_credit',
  'insurance_claim',
])
/** The transfers that bring money in from external:funding: the demo grant and a top-up. */
const FUNDING = new Set(['wallet_grant', 'wallet_funding'])
const OUT_OF_WALLET = new Set(['escrow_open', 'insurance_premium'])
const FUNDS = ['platform:insurance', 'platform:insurance_reserve']
const INTO_FUNDS = new Set(['insurance_premium', 'reserve_funding'])

/** Every invariant of docs/money.md, checked on the rail and through the API; throws naming the one broken. */
export async function checkInvariants(w: World) {
  const db = w.s.db
  const fail = (what: string): never => {
    throw new Error(`money invariant broken: ${what}`)
  }
  const unbalanced = await sql<{ transfer_id: string; sum: string }>`
    select transfer_id, sum(amount) as sum from rail_postings group by transfer_id having sum(amount) <> 0`.execute(
    db,
  )
  if (unbalanced.rows.length) fail(`transfers that do not balance: ${JSON.stringify(unbalanced.rows)}`)
  const negative = await sql<{ account_id: string; balance: string }>`
    select account_id, sum(amount) as balance from rail_postings group by account_id
    having sum(amount) < 0 and account_id <> 'external:funding'`.execute(db)
  if (negative.rows.length) fail(`accounts below zero: ${JSON.stringify(negative.rows)}`)
  const postings = await sql<{ account_id: string; kind: string; amount: string; transfer_id: string }>`
    select p.account_id, t.kind, p.amount, p.transfer_id from rail_postings p
    join rail_transfers t on t.id = p.transfer_id`.execute(db)
  const rows = postings.rows.map((r) => ({ ...r, amount: Number(r.amount) }))
  // money enters only from external:funding, and only as funding
  for (const r of rows.filter((r) => r.account_id.startsWith('external:')))
    if (r.account_id !== 'external:funding' || !FUNDING.has(r.kind))
      fail(`${r.kind} ${r.transfer_id} moves ${r.amount} through ${r.account_id}`)
  const total = (filter: (r: (typeof rows)[number]) => boolean) =>
    rows.filter(filter).reduce((sum, r) => sum + r.amount, 0)
  for (const who of w.clients) {
    const wallet = `wallet:${who.me.organization.id}`
    const mine = rows.filter((r) => r.account_id === wallet)
    for (const r of mine)
      if (!(r.amount > 0 ? INTO_WALLET : OUT_OF_WALLET).has(r.kind))
        fail(`${wallet} ${r.amount > 0 ? 'received' : 'paid'} ${r.amount} by ${r.kind} (${r.transfer_id})`)
    const funded = total((r) => r.account_id === wallet && FUNDING.has(r.kind))
    const claims = total((r) => r.account_id === wallet && r.kind === 'insurance_claim')
    const credits = total((r) => r.account_id === wallet && r.kind === 'sla_credit')
    const balance = total((r) => r.account_id === wallet)
    // its own money back (returns, refunds, a dispute's part) is never more than it put in escrow
    const back = total(
      (r) => r.account_id === wallet && ['escrow_return', 'refund', 'dispute_settlement'].includes(r.kind),
    )
    const putIn = -total((r) => r.account_id === wallet && r.kind === 'escrow_open')
    if (back > putIn) fail(`${wallet} got back ${back} of the ${putIn} it put in escrow`)
    if (balance > funded + claims + credits)
      fail(`${wallet} holds ${balance}, more than funded ${funded} + claims ${claims} + credits ${credits}`)
    // what insurance paid it is at most the coverage it bought, itself at most the money it had at risk
    const policies = await sql<{ coverage: string; at_risk: string | null; paid: string }>`
      select p.coverage_fils as coverage, (q.basis->>'money_at_risk_fils') as at_risk,
        coalesce((select sum(c.paid_fils) from insurance_claims c where c.policy_id = p.id), 0) as paid
      from insurance_policies p left join insurance_quotes q on q.id = p.quote_id
      where p.org_id = ${who.me.organization.id}`.execute(db)
    for (const p of policies.rows) {
      if (Number(p.paid) > Number(p.coverage)) fail(`a policy paid ${p.paid} of a coverage of ${p.coverage}`)
      if (p.at_risk === null || Number(p.coverage) > Number(p.at_risk))
        fail(`a policy covers ${p.coverage} with ${p.at_risk} at risk`)
    }
    const bought = policies.rows.reduce((sum, p) => sum + Number(p.coverage), 0)
    if (claims > bought) fail(`${wallet} was paid ${claims} by insurance, more than the ${bought} it bought`)
    // every paid claim is at most the price of the failed task it names, and the task failed by its agent
    const paid = await sql<{
      paid: string
      loss: string | null
      state: string | null
      cause: string | null
      price: string | null
    }>`
      select c.paid_fils as paid, c.loss_fils as loss, t.state, t.end_cause as cause, e.amount_fils as price
      from insurance_claims c
      left join tasks t on t.id = c.evidence->>'task_id'
      left join escrows e on e.task_id = t.id
      where c.org_id = ${who.me.organization.id} and c.state = 'paid'`.execute(db)
    for (const c of paid.rows)
      if (
        c.state !== 'failed' ||
        c.cause !== 'agent' ||
        Number(c.paid) > Number(c.price ?? 0) ||
        Number(c.paid) > Number(c.loss ?? 0)
      )
        fail(`a paid claim ${JSON.stringify(c)} is not a loss the record proves`)
    const to = encodeURIComponent(new Date(Date.now() + 60_000).toISOString())
    const from = encodeURIComponent(new Date(Date.now() - 86_400_000).toISOString())
    const st = await w.s.call(who, 'GET', `/api/statements?from=${from}&to=${to}`)
    if (st.status !== 200 || st.body.reconciles !== true)
      fail(`${wallet}'s statement: ${st.status} ${st.text.slice(0, 300)}`)
  }
  // the insurance funds: only premiums and reserve funding in, only claims out; never less than what they still cover
  for (const r of rows.filter((r) => FUNDS.includes(r.account_id)))
    if (!(r.amount > 0 ? INTO_FUNDS : new Set(['insurance_claim'])).has(r.kind))
      fail(`${r.account_id} moved ${r.amount} by ${r.kind}`)
  const funds = await w.s.call(w.operator, 'GET', '/api/insurance/funds')
  const f = funds.body as Record<string, { amount_fils: number }>
  if (f.exposure!.amount_fils > f.pool!.amount_fils + f.reserve!.amount_fils)
    fail(`the platform sold ${f.exposure!.amount_fils} of cover it cannot pay: ${JSON.stringify(funds.body)}`)
  await checkInvoices(w, fail)
}
