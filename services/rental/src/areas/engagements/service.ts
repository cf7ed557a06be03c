import { isEd25519DidKey, type Page } from '@svc/kit'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { BudgetService } from '../budgets/index.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { MarketService } from '../market/index.ts'
import type { OnboardingService } from '../onboarding/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import {
  bodyHash,
  DEFAULT_SERVICE_LEVELS,
  type EscrowBody,
  newId,
  signedBy,
  type SlaBody,
  type SlaTeam,
  type SlaTrial,
} from './bodies.ts'
import { escrowsOf, insertEscrow, openEscrow, takeOrMakeEscrow } from './escrow-store.ts'
import {
  activateEngagement,
  type EngagementRow,
  type EscrowRow,
  engagementOf,
  engagementsOf,
  insertEngagement,
} from './store.ts'
import type { EventType } from '../events/index.ts'
import { latestVersion } from './terms-store.ts'
import type { OrgClient } from '../../http/index.ts'

/** The parts of the context the money rules read. */
type MoneyContext = Pick<RentalContext, 'db' | 'rail' | 'provider' | 'config' | 'now'>

/** What engagements ask of budgets: to commit an escrow's money (402 `budget_exceeded`). */
type Budgets = Pick<BudgetService, 'commit'>

export const walletOf = (orgId: string) => `wallet:${orgId}`

/**
 * The demo grant: an organization's wallet (the organization pays) is funded once, at first sight, from `external:funding`
 * (idempotency key `wallet-grant:<organization>`, so it happens once however often it is asked). In
 * production the grant is 0 and this does nothing: wallets are funded by a payment provider,
 * the seam being a transfer from `external:<provider>` into `wallet:<organization>` on its webhook.
 */
export async function grantDemoWallet(ctx: MoneyContext, trx: RentalDb, orgId: string) {
  const grant = ctx.config.demoWalletFils
  if (grant <= 0) return
  await ctx.rail.transfer(trx, {
    idempotencyKey: `wallet-grant:${orgId}`,
    kind: 'wallet_grant',
    postings: [
      { account: 'external:funding', amount: -grant },
      { account: walletOf(orgId), amount: grant },
    ],
    memo: { reason: 'demo wallet grant' },
  })
}

export function escrowView(row: EscrowRow) {
  return {
    id: row.id,
    task_id: row.task_id,
    state: row.state,
    amount_fils: Number(row.amount_fils),
    currency: row.currency,
    hash: row.hash,
    body: row.body as EscrowBody,
    opened_at: row.opened_at?.toISOString() ?? null,
    released_at: row.released_at?.toISOString() ?? null,
    fee_fils: row.fee_fils === null ? null : Number(row.fee_fils),
    vat_fils: row.vat_fils === null ? null : Number(row.vat_fils),
    release_transfer_id: row.release_transfer_id,
  }
}

function engagementView(row: EngagementRow) {
  return {
    id: row.id,
    state: row.state,
    job_id: row.job_id,
    agent_did: row.agent_did,
    client_did: row.client_did,
    provider_did: row.provider_did,
    price_fils: Number(row.price_fils),
    currency: row.currency,
    created_at: row.created_at.toISOString(),
    activated_at: row.activated_at?.toISOString() ?? null,
    sla: { body: row.sla as SlaBody, hash: row.sla_hash, signed: row.sla_signature !== null },
  }
}

/** An engagement with its escrows, and the offer package (the bodies to sign with their hashes). */
function fullView(row: EngagementRow, escrows: EscrowRow[]) {
  return {
    engagement: { ...engagementView(row), escrows: escrows.map(escrowView) },
    package: {
      sla: { body: row.sla as SlaBody, hash: row.sla_hash },
      escrows: escrows
        .filter((e) => e.task_id === null || e.state === 'offered')
        .map((e) => ({ body: e.body as EscrowBody, hash: e.hash })),
    },
  }
}

/** An engagement's event: its stream is the engagement's id, the organization its owner. */
export function engagementEvent(
  events: EventService,
  trx: RentalDb,
  orgId: string,
  engagementId: string,
  actor: Actor,
  type: EventType,
  data: Record<string, unknown>,
  subjects: Record<string, string> = {},
) {
  return events.record(trx, {
    orgId,
    type,
    stream: engagementId,
    subjects: { engagement_id: engagementId, ...subjects },
    actor,
    data,
  })
}

export async function hire(
  ctx: MoneyContext,
  catalogue: CatalogueService,
  who: {
    client: OrgClient
    events: EventService
    budgets: Budgets
    market: Pick<MarketService, 'assertHireable'>
    /** The onboarding gate: a hire above RENTAL_KYB_HIRE_LIMIT_FILS needs an approved business check. */
    onboarding: Pick<OnboardingService, 'assertMayHire'>
    actor: Actor
  },
  input: { job_id: string; agent_did: string; client_did?: string | undefined },
  /**
   * A trial's convert (areas/trials): the trial named in the SLA body, and `claim` run last in the
   * hire's transaction (it locks the trial; what it throws rolls the whole hire back).
   */
  trial?: { body: SlaTrial; claim: (trx: RentalDb, engagementId: string) => Promise<void> },
  /** A team's hire (areas/teams): its terms bound in the SLA body, `claim` run last in the transaction. */
  team?: { body: SlaTeam; claim: (trx: RentalDb, engagementId: string) => Promise<void> },
) {
  const { client } = who
  const { job, agent } = await catalogue.jobAndAgent(input.job_id, input.agent_did)
  if (!job) throw rentalError('job_not_found', `no job ${input.job_id}`)
  if (!agent) throw rentalError('agent_not_serving', `${input.agent_did} does not serve ${input.job_id}`)
  const clientDid = input.client_did ?? client.clientDid
  if (!clientDid)
    throw rentalError('client_did_required', 'give client_did: the session has no DID of the client')
  if (!isEd25519DidKey(clientDid))
    throw rentalError('invalid_client_did', 'client_did must be a did:key of an Ed25519 key')
  const issuedAt = ctx.now().toISOString()
  const engagementId = newId('eng')
  const escrowId = newId('esc')
  const price = Number(job.price_fils)
  await who.onboarding.assertMayHire(client.orgId, price)
  const sla: SlaBody = {
    type: 'svc.sla',
    v: 1,
    engagement_id: engagementId,
    job_id: job.id,
    agent_did: agent.did,
    client_did: clientDid,
    provider_did: ctx.provider.did,
    price_fils: price,
    currency: 'AED',
    outcome: job.outcome,
    terms: {
      price_per: 'task',
      fee_bps: ctx.config.feeBps,
      output_retention_s: ctx.config.outputTtlS,
      release: 'client_signed',
    },
    issued_at: issuedAt,
    ...(trial ? { trial: trial.body } : {}),
    ...(team ? { team: team.body } : {}),
    service_levels: { ...DEFAULT_SERVICE_LEVELS, latency_p95_ms: ctx.config.sla.latencyP95Ms },
  }
  const escrow: EscrowBody = {
    type: 'svc.escrow',
    v: 1,
    escrow_id: escrowId,
    engagement_id: engagementId,
    task_id: null,
    amount_fils: price,
    currency: 'AED',
    payer_did: clientDid,
    payee_did: agent.did,
    provider_did: ctx.provider.did,
    issued_at: issuedAt,
  }
  // the engagement stays on the agent's version at hire until its client accepts a newer one
  const version = await latestVersion(ctx.db, agent.did)
  await inTransaction(ctx.db, async (trx) => {
    // an agent whose market listing is unavailable (or unpublished, or its card changed) is not
    // hired: 409, checked on the listing row shared-locked in this transaction
    await who.market.assertHireable(agent.did, trx)
    await grantDemoWallet(ctx, trx, client.orgId)
    await insertEngagement(trx, {
      id: engagementId,
      org_id: client.orgId,
      client_did: clientDid,
      job_id: job.id,
      agent_id: agent.id,
      agent_did: agent.did,
      provider_did: ctx.provider.did,
      price_fils: price,
      state: 'pending',
      sla: JSON.stringify(sla),
      sla_hash: bodyHash(sla),
      agent_version: version?.version ?? null,
    })
    if (price > 0) {
      await insertEscrow(trx, client.orgId, escrow)
      // the package's escrow is committed money: the budgets may refuse it (402, all rolled back)
      await who.budgets.commit(trx, {
        orgId: client.orgId,
        engagementId,
        agentDid: agent.did,
        amountFils: price,
        at: new Date(issuedAt),
      })
    }
    await engagementEvent(who.events, trx, client.orgId, engagementId, who.actor, 'engagement.created', {
      job_id: job.id,
      agent_did: agent.did,
      client_did: clientDid,
      price_fils: price,
    })
    if (trial) await trial.claim(trx, engagementId)
    if (team) await team.claim(trx, engagementId)
  })
  return engagementDetail(ctx.db, client.orgId, engagementId)
}

/**
 * The escrow that pays for a new task, in the task's transaction: the engagement's first task
 * takes the package's escrow; each later one gets a new escrow body to sign. A free engagement
 * has none (undefined).
 */
export async function escrowForTask(
  budgets: Budgets,
  trx: RentalDb,
  engagement: EngagementRow,
  taskId: string,
  now: Date,
) {
  if (Number(engagement.price_fils) <= 0) return undefined
  const body: EscrowBody = {
    type: 'svc.escrow',
    v: 1,
    escrow_id: newId('esc'),
    engagement_id: engagement.id,
    task_id: taskId,
    amount_fils: Number(engagement.price_fils),
    currency: 'AED',
    payer_did: engagement.client_did,
    payee_did: engagement.agent_did,
    provider_did: engagement.provider_did,
    issued_at: now.toISOString(),
  }
  // the package's untaken escrow (one row, not the engagement's every escrow), else a new one with
  // the budgets it falls under locked: one statement
  const { escrow, made, budgets: matched } = await takeOrMakeEscrow(trx, engagement.org_id, body)
  if (!made) return escrow
  // a new escrow is committed money (the package's was counted at hiring)
  await budgets.commit(
    trx,
    {
      orgId: engagement.org_id,
      engagementId: engagement.id,
      agentDid: engagement.agent_did,
      amountFils: body.amount_fils,
      at: now,
    },
    { matched },
  )
  return escrow
}

export async function engagementDetail(db: RentalDb, orgId: string, id: string) {
  const row = await engagementOf(db, orgId, id)
  if (!row) throw engagementNotFound(id)
  return fullView(row, await escrowsOf(db, id))
}

export const engagementNotFound = (id: string) => rentalError('engagement_not_found', `no engagement ${id}`)

export async function engagementList(db: RentalDb, orgId: string, page: Page) {
  return { engagements: (await engagementsOf(db, orgId, page.limit, page.offset)).map(engagementView) }
}

export interface SignaturesInput {
  sla_signature?: string | undefined
  escrow_signatures?:
    Array<{ escrow_hash?: string | undefined; escrow_id?: string | undefined; signature: string }> | undefined
}

/**
 * The client's signatures: every one is checked before anything changes (one forged signature
 * refuses the whole request, 400 `bad_signature`). A valid SLA signature activates a pending
 * engagement; a valid escrow signature opens the escrow, moving its amount from the client's
 * wallet into `escrow:<id>` on the rail in the same transaction (key `escrow-open:<id>`).
 */
export async function sign(
  ctx: MoneyContext,
  who: { orgId: string; events: EventService; actor: Actor },
  id: string,
  input: SignaturesInput,
) {
  const { orgId } = who
  const record = (
    trx: RentalDb,
    type: EventType,
    data: Record<string, unknown>,
    subjects?: Record<string, string>,
  ) => engagementEvent(who.events, trx, orgId, id, who.actor, type, data, subjects)
  if (input.sla_signature === undefined && !input.escrow_signatures?.length)
    throw rentalError('nothing_to_sign', 'give sla_signature or escrow_signatures')
  await inTransaction(ctx.db, async (trx) => {
    const engagement = await engagementOf(trx, orgId, id, true)
    if (!engagement) throw engagementNotFound(id)
    if (
      input.sla_signature !== undefined &&
      !signedBy(engagement.client_did, engagement.sla, input.sla_signature)
    )
      throw rentalError('bad_signature', 'sla_signature is not the client’s signature of the SLA body')
    const escrows = await escrowsOf(trx, id)
    const chosen = new Map<string, { escrow: EscrowRow; signature: string }>()
    for (const given of input.escrow_signatures ?? []) {
      const escrow = escrows.find((e) =>
        given.escrow_hash !== undefined ? e.hash === given.escrow_hash : e.id === given.escrow_id,
      )
      if (!escrow || (given.escrow_hash === undefined && given.escrow_id === undefined))
        throw rentalError(
          'unknown_escrow',
          `no escrow ${given.escrow_hash ?? given.escrow_id ?? '(unnamed)'} in this engagement`,
        )
      if (!signedBy(engagement.client_did, escrow.body, given.signature))
        throw rentalError('bad_signature', `the signature of escrow ${escrow.id} is not the client’s`)
      chosen.set(escrow.id, { escrow, signature: given.signature })
    }
    const now = ctx.now()
    let state = engagement.state
    if (input.sla_signature !== undefined && state === 'pending') {
      await activateEngagement(trx, id, input.sla_signature, now)
      await record(trx, 'engagement.activated', {
        from: 'pending',
        to: 'active',
        sla_hash: engagement.sla_hash,
      })
      state = 'active'
    }
    if (chosen.size && state !== 'active')
      throw rentalError('engagement_not_active', 'sign the SLA before opening escrows')
    if (chosen.size) await grantDemoWallet(ctx, trx, orgId)
    for (const { escrow, signature } of chosen.values()) {
      if (escrow.state !== 'offered') continue
      const transfer = await ctx.rail.transfer(trx, {
        idempotencyKey: `escrow-open:${escrow.id}`,
        kind: 'escrow_open',
        postings: [
          { account: walletOf(orgId), amount: -Number(escrow.amount_fils) },
          { account: `escrow:${escrow.id}`, amount: Number(escrow.amount_fils) },
        ],
        memo: { escrow_id: escrow.id, engagement_id: id, escrow_hash: escrow.hash },
      })
      await openEscrow(trx, escrow.id, { signature, transferId: transfer.id, at: now })
      await record(
        trx,
        'escrow.opened',
        {
          escrow_hash: escrow.hash,
          amount_fils: Number(escrow.amount_fils),
          currency: escrow.currency,
          transfer_id: transfer.id,
        },
        { escrow_id: escrow.id, ...(escrow.task_id ? { task_id: escrow.task_id } : {}) },
      )
    }
  })
  return engagementDetail(ctx.db, orgId, id)
}

/** 400 unless `did` is an Ed25519 did:key (the only agent DIDs the rental knows). */
export function checkAgentDid(did: string) {
  if (!isEd25519DidKey(did))
    throw rentalError('invalid_agent_did', `${did.slice(0, 80)} is not an Ed25519 did:key`)
}
