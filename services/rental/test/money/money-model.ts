import fc from 'fast-check'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import type { Ed25519KeyPair } from '@svc/trust/ed25519'
import { agents } from '../../../agents/src/app.ts'
import { type Client, type FullStack, startFullStack } from '../support/full-stack.ts'
import { endedTask, fundReserve, newTask, quoteAndBuy, releaseCompleted } from '../support/money-actions.ts'
import { checkInvariants } from './money-invariants.ts'
import { INVOICE_ACTIONS } from './money-invoices.ts'

/**
 * Money conservation as a property: random sequences of client, provider and operator actions
 * through the running HTTP services, and after every step the invariants of docs/money.md checked
 * against the rail and the statements. The actions are a table: a new money action (invoices, …)
 * is one more entry of MONEY_ACTIONS.
 */

export interface Engagement {
  id: string
  who: Client
  key: Ed25519KeyPair
  ended: boolean
}

export interface World {
  s: FullStack
  /** The operator (bob, another client's member, named in RENTAL_OPERATORS). */
  operator: Client
  clients: Client[]
  agentDid: string
  engagements: Engagement[]
  /** The agents service when an action restarted it (closed last). */
  agents?: RunningService<unknown>
  /** How many clients were signed in (their emails are numbered). */
  made: number
  /** The clients that pulled their kill switch on the agent (their engagements take no task). */
  revoked: Set<Client>
  /** What the warm start did. */
  warmUp: string[]
}

/** One action: what it does with the picks (random naturals), in words for the log. */
export interface MoneyAction {
  weight: number
  run(world: World, picks: number[]): Promise<string>
}

const of = <T>(items: T[], pick: number) => (items.length ? items[pick % items.length] : undefined)
const activeOf = (w: World) => w.engagements.filter((e) => !e.ended && !w.revoked.has(e.who))

/** Mostly (2 picks in 3) one of the engagements with a policy, when there are any: where claims may pay. */
async function insuredFirst(w: World, among: Engagement[], pick: number) {
  const insured = new Set(
    (await w.s.db.selectFrom('insurance_policies').select('engagement_id').execute()).map(
      (p) => p.engagement_id,
    ),
  )
  const covered = among.filter((e) => insured.has(e.id))
  return of(pick % 3 && covered.length ? covered : among, pick)
}
const status = (res: { status: number; body: Record<string, unknown> }) =>
  `${res.status}${res.status >= 300 ? ` ${(res.body.error as { code?: string } | undefined)?.code ?? ''}` : ''}`

/** The org's escrows in these states (read from the rental's tables: the property picks among them). */
async function escrowsOf(w: World, who: Client, states: string[]) {
  return w.s.db
    .selectFrom('escrows')
    .select(['id', 'task_id', 'amount_fils', 'state'])
    .where('org_id', '=', who.me.organization.id)
    .where('state', 'in', states as never[])
    .where('task_id', 'is not', null)
    .orderBy('id')
    .execute()
}

export const MONEY_ACTIONS: Record<string, MoneyAction> = {
  new_client: {
    weight: 2,
    async run(w) {
      const client = await w.s.signInWith(`client${++w.made}@money.example`)
      w.clients.push(client)
      return `a new client ${client.me.organization.id}`
    },
  },
  // a demo top-up through the wallet's route (external:funding → wallet), sometimes the same key twice
  top_up: {
    weight: 2,
    async run(w, [c = 0, amount = 0, again = 0]) {
      const who = of(w.clients, c)!
      const headers = { 'idempotency-key': `top-up-${c}-${amount}` }
      const body = { amount_fils: 1 + (amount % 50_000) }
      const res = await w.s.call(who, 'POST', '/api/wallet/top-ups', body, { headers })
      const replay = again % 2 ? await w.s.call(who, 'POST', '/api/wallet/top-ups', body, { headers }) : null
      return `top-up ${body.amount_fils} ${status(res)}${replay ? ` then again ${status(replay)}` : ''}`
    },
  },
  hire: {
    weight: 4,
    async run(w, [c = 0]) {
      const who = of(w.clients, c)!
      const key = w.s.newClientKey()
      try {
        const id = await w.s.hireAndSign(who, 'job_summary', w.agentDid, key)
        w.engagements.push({ id, who, key, ended: false })
        return `hire ${id}`
      } catch (err) {
        return `hire refused: ${(err as Error).message.slice(0, 80)}`
      }
    },
  },
  task: {
    weight: 6,
    async run(w, [e = 0, sign = 0]) {
      const eng = of(activeOf(w), e)
      if (!eng) return 'task: no engagement'
      try {
        const task = await newTask(
          w.s,
          eng.who,
          eng.id,
          eng.key,
          'The ledger records every receipt.',
          sign % 4 !== 0,
        )
        const ended = await endedTask(w.s, eng.who, task.id)
        return `task ${task.id} ${ended.state}`
      } catch (err) {
        return `task refused: ${(err as Error).message.slice(0, 80)}`
      }
    },
  },
  release: {
    weight: 4,
    async run(w, [e = 0]) {
      const eng = of(w.engagements, e)
      if (!eng) return 'release: no engagement'
      return `released ${await releaseCompleted(w.s, eng.who, eng.id, eng.key)} of ${eng.id}`
    },
  },
  refund: {
    weight: 2,
    async run(w, [c = 0, x = 0, amount = 0]) {
      const who = of(w.clients, c)!
      const escrow = of(await escrowsOf(w, who, ['released']), x)
      if (!escrow) return 'refund: nothing released'
      const asked = 1 + (amount % Number(escrow.amount_fils))
      const res = await w.s.call(who, 'POST', '/api/refunds', {
        escrow_id: escrow.id,
        amount_fils: asked,
        reason: 'The property asks for money back.',
      })
      if (res.status !== 201) return `refund ${asked}: ${status(res)}`
      const id = res.body.id as string
      const accepted = await w.s.call(w.operator, 'POST', `/api/refunds/${id}/accept`, {})
      const approved = await w.s.call(w.operator, 'POST', `/api/refunds/${id}/approve`, {})
      return `refund ${asked} of ${escrow.id}: accept ${status(accepted)}, approve ${status(approved)}`
    },
  },
  dispute: {
    weight: 2,
    async run(w, [c = 0, x = 0, outcome = 0]) {
      const who = of(w.clients, c)!
      const escrow = of(await escrowsOf(w, who, ['open', 'released']), x)
      if (!escrow) return 'dispute: no escrow'
      const amount = Number(escrow.amount_fils)
      const res = await w.s.call(who, 'POST', '/api/disputes', {
        task_id: escrow.task_id,
        amount_fils: amount,
        reason: 'The property disputes it.',
      })
      if (res.status !== 201) return `dispute ${escrow.id}: ${status(res)}`
      const body = [
        { outcome: 'client' },
        { outcome: 'provider' },
        { outcome: 'split', client_fils: Math.ceil(amount / 2), provider_fils: Math.floor(amount / 2) },
      ][outcome % 3]!
      const resolved = await w.s.call(
        w.operator,
        'POST',
        `/api/disputes/${res.body.id as string}/resolve`,
        body,
      )
      return `dispute ${escrow.id} → ${body.outcome}: ${status(resolved)}`
    },
  },
  insure: {
    weight: 4,
    async run(w, [e = 0, small = 0]) {
      const eng = of(activeOf(w), e)
      if (!eng) return 'insure: no engagement'
      const body = small % 2 ? { coverage_fils: 200 + (small % 1000) } : {}
      const { quote, bought } = await quoteAndBuy(w.s, eng.who, eng.id, body)
      return `insure ${eng.id}: quote ${status(quote)}${bought ? `, buy ${status(bought)}` : ''}`
    },
  },
  claim: {
    weight: 4,
    async run(w, [e = 0, t = 0, amount = 0]) {
      const eng = await insuredFirst(w, w.engagements, e)
      if (!eng) return 'claim: no engagement'
      const tasks = await w.s.db
        .selectFrom('tasks')
        .select(['id', 'state'])
        .where('engagement_id', '=', eng.id)
        .orderBy('id')
        .execute()
      // mostly a failed task (the claims that may pay), sometimes any
      const failed = tasks.filter((x) => x.state === 'failed')
      const task = of(t % 3 && failed.length ? failed : tasks, t)
      const res = await w.s.call(eng.who, 'POST', `/api/engagements/${eng.id}/insurance/claims`, {
        type: 'failed_task',
        ...(task ? { task_id: task.id } : {}),
        ...(amount % 3 ? { amount_fils: 1 + amount } : {}),
      })
      const claim = res.body.claim as { state: string; paid: { amount_fils: number } } | undefined
      return `claim ${task?.id ?? '-'}: ${status(res)} ${claim ? `${claim.state} ${claim.paid.amount_fils}` : ''}`
    },
  },
  fund_reserve: {
    weight: 2,
    async run(w, [share = 0]) {
      // a quarter to all of the fees (what is moved is not there for a refund's or dispute's fee part)
      const funds = await w.s.call(w.operator, 'GET', '/api/insurance/funds')
      const fees = (funds.body.fees as { amount_fils: number }).amount_fils
      const amount = Math.floor((fees * (1 + (share % 4))) / 4)
      if (amount <= 0) return 'fund reserve: no fees'
      return `fund reserve ${amount}: ${status(await fundReserve(w.s, w.operator, amount))}`
    },
  },
  sla_credits: {
    weight: 1,
    async run(w) {
      return `sla credits run: ${status(await w.s.call(w.operator, 'POST', '/api/sla/credits/run', {}))}`
    },
  },
  end: {
    weight: 1,
    async run(w, [e = 0, how = 0]) {
      const eng = of(activeOf(w), e)
      if (!eng) return 'end: no engagement'
      const running = how % 2 ? 'cancel' : 'finish'
      const res = await w.s.call(eng.who, 'POST', `/api/engagements/${eng.id}/end`, { running })
      if (res.status === 200) eng.ended = true
      return `end ${eng.id} (${running}): ${status(res)}`
    },
  },
  kill_switch: {
    weight: 1,
    async run(w, [c = 0]) {
      const who = of(w.clients, c)!
      const res = await w.s.call(who, 'POST', `/api/agents/${w.agentDid}/revoke`, { reason: 'the property' })
      if (res.status === 200) w.revoked.add(who)
      return `revoke by ${who.me.organization.id}: ${status(res)}`
    },
  },
  agent_down: {
    weight: 2,
    async run(w, [e = 0]) {
      const eng = await insuredFirst(w, activeOf(w), e)
      if (!eng) return 'agent down: no engagement'
      const running = w.agents ?? w.s.agents
      const url = running.url
      await running.close()
      let said: string
      try {
        const task = await newTask(w.s, eng.who, eng.id, eng.key, 'The agent is down.')
        said = `agent down: task ${task.id} ${(await endedTask(w.s, eng.who, task.id)).state}`
      } catch (err) {
        said = `agent down: ${(err as Error).message.slice(0, 80)}`
      }
      w.agents = await startService(
        agents,
        testEnv({
          AGENTS_KEY_SEED: Buffer.alloc(32, 7).toString('base64url'),
          AGENTS_PORT: new URL(url).port,
          AGENTS_URL: url,
          IDP_URL: w.s.idp.url,
          AGENTS_TOOL_WAIT_MS: '0',
        }),
      )
      return said
    },
  },
  ...INVOICE_ACTIONS,
}

/** A stack for the property: bob the operator, half of each release the platform's fee, one attempt per task. */
export async function moneyWorld(): Promise<World> {
  const s = await startFullStack({
    RENTAL_OPERATORS: 'another-client',
    RENTAL_FEE_BPS: '5000',
    RENTAL_TASK_RETRIES: '0',
  })
  const world: World = {
    s,
    operator: s.bob,
    clients: [s.alice],
    agentDid: await s.agentOf('job_summary'),
    engagements: [],
    made: 0,
    revoked: new Set(),
    warmUp: [],
  }
  // a warm start, so that the first steps have something to act on: an engagement of alice's with
  // two tasks released (fees) and invoiced, one fil of one refunded (a credit note), half the fees moved into the
  await MONEY_ACTIONS.hire!.run(world, [0])
  // reserve (funds to back cover), a task held (money at risk) insured, a task its agent failed claimed
  const warmUp = [
    'task',
    'task',
    'release',
    'invoice',
    'refund',
    'fund_reserve',
    'task',
    'insure',
    'agent_down',
    'claim',
  ]
  for (const step of warmUp) world.warmUp.push(`${step}: ${await MONEY_ACTIONS[step]!.run(world, [0, 1, 0])}`)
  return world
}

export async function closeWorld(w: World) {
  await w.agents?.close()
  await w.s.close()
}

const NAMES = Object.keys(MONEY_ACTIONS)
const WEIGHTED = NAMES.flatMap((name) => Array<string>(MONEY_ACTIONS[name]!.weight).fill(name))

/** A step: the action's name and its picks. */
export const stepArb = fc.record({
  action: fc.constantFrom(...WEIGHTED),
  picks: fc.array(fc.nat({ max: 10_000 }), { minLength: 3, maxLength: 3 }),
})

/**
 * Runs `runs` random sequences of `steps` actions on the world (which persists between
 * runs: the invariants are the platform's, whatever came before), checking the invariants before
 * and after every step. No shrinking (`endOnFailure`): the stack is not reset between runs, so the
 * failing sequence is reported as it ran, with its log.
 */
export async function runMoneyProperty(w: World, options: { seed: number; runs: number; steps: number }) {
  const log: string[] = []
  await fc.assert(
    fc.asyncProperty(
      fc.array(stepArb, { minLength: options.steps, maxLength: options.steps }),
      async (steps) => {
        await checkInvariants(w)
        for (const step of steps) {
          const said = await MONEY_ACTIONS[step.action]!.run(w, step.picks)
          log.push(`${step.action}: ${said}`)
          try {
            await checkInvariants(w)
          } catch (err) {
            throw new Error(`${(err as Error).message}\nafter:\n${log.slice(-20).join('\n')}`)
          }
        }
      },
    ),
    { seed: options.seed, numRuns: options.runs, endOnFailure: true },
  )
  return log
}
