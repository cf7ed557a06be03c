import { createHash, randomBytes } from 'node:crypto'
import { b64uDecode } from '@svc/trust/base64url'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'

/** Prefixed random ids: `eng_…`, `esc_…`, `tsk_…`. */
export const newId = (prefix: 'eng' | 'esc' | 'tsk') => `${prefix}_${randomBytes(12).toString('base64url')}`

/** `sha256:<hex>` of the JCS (RFC 8785) form of a body: the name a signed body goes by. */
export const bodyHash = (body: unknown) =>
  `sha256:${createHash('sha256').update(canonicalBytes(body)).digest('hex')}`

/**
 * Checks a base64url Ed25519 signature over the JCS bytes of `body` by the key behind `did`
 * (strict RFC 8032 verification). Anything malformed answers false.
 */
export function signedBy(did: string, body: unknown, signature: string): boolean {
  try {
    return verifyEd25519(ed25519FromDidKey(did), canonicalBytes(body), b64uDecode(signature))
  } catch {
    return false
  }
}

export type SlaBody = {
  type: 'svc.sla'
  v: 1
  engagement_id: string
  job_id: string
  agent_did: string
  client_did: string
  provider_did: string
  price_fils: number
  currency: 'AED'
  outcome: string
  terms: { price_per: 'task'; fee_bps: number; output_retention_s: number; release: 'client_signed' }
  issued_at: string
  /** A converted trial's history (areas/trials): its id, the tasks it ran and their receipts. */
  trial?: SlaTrial
  /** The measurable terms (areas/sla); an engagement signed before they existed has none: DEFAULT_SERVICE_LEVELS apply. */
  service_levels?: ServiceLevels
  /** A team's terms (areas/teams): the engagement is on the team's lead, its members bound here. */
  team?: SlaTeam
}

/** The team terms an SLA binds (areas/teams, docs/rental/teams.md). */
export type SlaTeam = {
  team_id: string
  lead_did: string
  /** each member's DID, its share of the task price (basis points) and the price of a hop to it */
  members: Array<{ agent_did: string; share_bps: number; hop_fils: number }>
  /** who may delegate to whom (DIDs; the lead's and members') */
  delegation: Array<{ from: string; to: string[] }>
  max_depth: number
  task_budget_fils: number
}

/**
 * The SLA's measurable terms, measured from the engagement's tasks and their receipts (areas/sla,
 * docs/rental/sla.md). Rates are basis points (9500 = 95 %).
 */
export type ServiceLevels = {
  v: 1
  /** p95 (nearest rank) of completed_at − started_at over the last `latency_window_tasks` completed tasks */
  latency_p95_ms: number
  latency_window_tasks: number
  /** completed ÷ (completed + failed) over the last `success_window_tasks` ended tasks */
  success_rate_bps: number
  success_window_tasks: number
  /** completed ÷ (completed + failed) over the tasks ended in the last `availability_window_days` days */
  availability_bps: number
  availability_window_days: number
  /** the longest a reported incident may wait for the provider's first response */
  incident_response_s: number
  /** what each breach credits the client: basis points of the period's fees */
  credit_bps_per_breach: number
}

/** What every built-in job offers (the task timeout bounds latency; 5 % of the period's fees per breach). */
export const DEFAULT_SERVICE_LEVELS: ServiceLevels = {
  v: 1,
  latency_p95_ms: 30_000,
  latency_window_tasks: 20,
  success_rate_bps: 9500,
  success_window_tasks: 20,
  availability_bps: 9900,
  availability_window_days: 30,
  incident_response_s: 3600,
  credit_bps_per_breach: 500,
}

export type SlaTrial = { trial_id: string; tasks_used: number; task_ids: string[]; receipt_ids: string[] }

export type EscrowBody = {
  type: 'svc.escrow'
  v: 1
  escrow_id: string
  engagement_id: string
  task_id: string | null
  amount_fils: number
  currency: 'AED'
  payer_did: string
  payee_did: string
  provider_did: string
  issued_at: string
}

export type ReleaseBody = {
  type: 'svc.release'
  v: 1
  escrow_hash: string
  engagement_id: string
  amount_fils: number
  payee_did: string
  fee_fils: number
  /** The VAT inside the amount (prices are VAT-inclusive): to platform:vat, with the fee; the payee gets the rest. */
  vat_fils: number
  payer_did: string
  issued_at: string
}

/** The fee of a release: `fee_bps` of the amount, rounded down to whole fils. */
export const feeOf = (amount: number, feeBps: number) => Math.floor((amount * feeBps) / 10_000)
