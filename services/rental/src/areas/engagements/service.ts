import { badRequest, conflict, notFound } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { inTransaction, type RentalDb } from '../../db.ts'
import type { ConsoleSession } from '../auth/hooks.ts'
import type { ProviderIdentity } from '../provider/identity.ts'
import type { PaymentRail } from '../rail/rail.ts'
import { bodyHash, type EscrowBody, isEd25519DidKey, newId, signedBy, type SlaBody } from './bodies.ts'
import {
  type EngagementRow,
  type EscrowRow,
  engagementOf,
  engagementsOf,
  escrowsOf,
  jobAndAgent,
} from './store.ts'

/** What the money areas (engagements, tasks, releases) share. */
export interface MoneyDeps {
  db: RentalDb
  rail: PaymentRail
  receipts: ReceiptWriter
  provider: ProviderIdentity
  feeBps: number
  /** Fils granted once to a wallet at first sight; 0 (production) grants nothing. */
  demoWalletFils: number
  outputTtlS: number
  now: () => Date
}

export const walletOf = (subject: string) => `wallet:${subject}`

/**
 * The demo grant: a client's wallet is funded once, at first sight, from `external:funding`
 * (idempotency key `wallet-grant:<subject>`, so it happens once however often it is asked). In
 * production the grant is 0 and this does nothing: wallets are funded by a payment provider,
 * the seam being a transfer from `external:<provider>` into `wallet:<subject>` on its webhook.
 */
export async function grantDemoWallet(deps: MoneyDeps, trx: RentalDb, subject: string) {
  if (deps.demoWalletFils <= 0) return
  await deps.rail.transfer(trx, {
    idempotencyKey: `wallet-grant:${subject}`,
    kind: 'wallet_grant',
    postings: [
      { account: 'external:funding', amount: -deps.demoWalletFils },
      { account: walletOf(subject), amount: deps.demoWalletFils },
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

export async function hire(
  deps: MoneyDeps,
  session: ConsoleSession,
  input: { job_id: string; agent_did: string; client_did?: string | undefined },
) {
  const { job, agent } = await jobAndAgent(deps.db, input.job_id, input.agent_did)
  if (!job) throw notFound(`no job ${input.job_id}`, 'job_not_found')
  if (!agent) throw badRequest(`${input.agent_did} does not serve ${input.job_id}`, 'agent_not_serving')
  const clientDid = input.client_did ?? session.clientDid
  if (!clientDid)
    throw badRequest('give client_did: the session has no DID of the client', 'client_did_required')
  if (!isEd25519DidKey(clientDid))
    throw badRequest('client_did must be a did:key of an Ed25519 key', 'invalid_client_did')
  const issuedAt = deps.now().toISOString()
  const engagementId = newId('eng')
  const escrowId = newId('esc')
  const price = Number(job.price_fils)
  const sla: SlaBody = {
    type: 'svc.sla',
    v: 1,
    engagement_id: engagementId,
    job_id: job.id,
    agent_did: agent.did,
    client_did: clientDid,
    provider_did: deps.provider.did,
    price_fils: price,
    currency: 'AED',
    outcome: job.outcome,
    terms: {
      price_per: 'task',
      fee_bps: deps.feeBps,
      output_retention_s: deps.outputTtlS,
      release: 'client_signed',
    },
    issued_at: issuedAt,
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
    provider_did: deps.provider.did,
    issued_at: issuedAt,
  }
  await inTransaction(deps.db, async (trx) => {
    await grantDemoWallet(deps, trx, session.subject)
    await trx
      .insertInto('engagements')
      .values({
        id: engagementId,
        client_subject: session.subject,
        client_did: clientDid,
        job_id: job.id,
        agent_id: agent.id,
        agent_did: agent.did,
        provider_did: deps.provider.did,
        price_fils: price,
        state: 'pending',
        sla: JSON.stringify(sla),
        sla_hash: bodyHash(sla),
      })
      .execute()
    if (price > 0) await insertEscrow(trx, session.subject, escrow)
  })
  return engagementDetail(deps.db, session.subject, engagementId)
}

export async function insertEscrow(trx: RentalDb, subject: string, body: EscrowBody) {
  await trx
    .insertInto('escrows')
    .values({
      id: body.escrow_id,
      engagement_id: body.engagement_id,
      client_subject: subject,
      task_id: body.task_id,
      amount_fils: body.amount_fils,
      body: JSON.stringify(body),
      hash: bodyHash(body),
      state: 'offered',
    })
    .execute()
}

export async function engagementDetail(db: RentalDb, subject: string, id: string) {
  const row = await engagementOf(db, subject, id)
  if (!row) throw notFound(`no engagement ${id}`, 'engagement_not_found')
  return fullView(row, await escrowsOf(db, id))
}

export async function engagementList(db: RentalDb, subject: string, limit: number, offset: number) {
  return { engagements: (await engagementsOf(db, subject, limit, offset)).map(engagementView) }
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
export async function sign(deps: MoneyDeps, subject: string, id: string, input: SignaturesInput) {
  if (input.sla_signature === undefined && !input.escrow_signatures?.length)
    throw badRequest('give sla_signature or escrow_signatures', 'nothing_to_sign')
  await inTransaction(deps.db, async (trx) => {
    const engagement = await engagementOf(trx, subject, id, true)
    if (!engagement) throw notFound(`no engagement ${id}`, 'engagement_not_found')
    if (
      input.sla_signature !== undefined &&
      !signedBy(engagement.client_did, engagement.sla, input.sla_signature)
    )
      throw badRequest('sla_signature is not the client’s signature of the SLA body', 'bad_signature')
    const escrows = await escrowsOf(trx, id)
    const chosen = new Map<string, { escrow: EscrowRow; signature: string }>()
    for (const given of input.escrow_signatures ?? []) {
      const escrow = escrows.find((e) =>
        given.escrow_hash !== undefined ? e.hash === given.escrow_hash : e.id === given.escrow_id,
      )
      if (!escrow || (given.escrow_hash === undefined && given.escrow_id === undefined))
        throw badRequest(
          `no escrow ${given.escrow_hash ?? given.escrow_id ?? '(unnamed)'} in this engagement`,
          'unknown_escrow',
        )
      if (!signedBy(engagement.client_did, escrow.body, given.signature))
        throw badRequest(`the signature of escrow ${escrow.id} is not the client’s`, 'bad_signature')
      chosen.set(escrow.id, { escrow, signature: given.signature })
    }
    const now = deps.now()
    let state = engagement.state
    if (input.sla_signature !== undefined && state === 'pending') {
      await trx
        .updateTable('engagements')
        .set({ state: 'active', sla_signature: input.sla_signature, activated_at: now })
        .where('id', '=', id)
        .execute()
      state = 'active'
    }
    if (chosen.size && state !== 'active')
      throw conflict('sign the SLA before opening escrows', 'engagement_not_active')
    if (chosen.size) await grantDemoWallet(deps, trx, subject)
    for (const { escrow, signature } of chosen.values()) {
      if (escrow.state !== 'offered') continue
      const transfer = await deps.rail.transfer(trx, {
        idempotencyKey: `escrow-open:${escrow.id}`,
        kind: 'escrow_open',
        postings: [
          { account: walletOf(subject), amount: -Number(escrow.amount_fils) },
          { account: `escrow:${escrow.id}`, amount: Number(escrow.amount_fils) },
        ],
        memo: { escrow_id: escrow.id, engagement_id: id, escrow_hash: escrow.hash },
      })
      await trx
        .updateTable('escrows')
        .set({ state: 'open', signature, open_transfer_id: transfer.id, opened_at: now })
        .where('id', '=', escrow.id)
        .execute()
    }
  })
  return engagementDetail(deps.db, subject, id)
}
