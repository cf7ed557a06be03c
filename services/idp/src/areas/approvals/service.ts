import { createHash, randomBytes } from 'node:crypto'
import { type Jobs } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import { canonicalize } from '@svc/trust'
import { type IdpDb, inTransaction } from '../../db.ts'
import type { AccountsService } from '../accounts/index.ts'
import { type ApprovalRow, approvalById, insertApproval, recordPoll, setReceipt, settle } from './store.ts'
import { idpError } from '../../errors.ts'

/** identity-provider.md, Limits. */
const MAX_ACTION = 300
const MAX_DETAIL_FIELDS = 12
const MIN_EXPIRES_S = 60
const MAX_EXPIRES_S = 86_400
const DEFAULT_EXPIRES_S = 900
export const EXPIRY_QUEUE = 'approval-expiry'

export interface ApprovalDeps {
  db: IdpDb
  jobs: Jobs
  receipts: ReceiptWriter
  issuer: string
  /** Seconds a client waits between polls. */
  intervalS: number
  accounts: AccountsService
}

export interface ApprovalRequest {
  action: string
  detail?: Record<string, unknown>
  expires_in?: number
}

const invalid = (message: string) => idpError('invalid_request', message)
function check(input: ApprovalRequest) {
  if (!input.action.trim() || input.action.length > MAX_ACTION)
    throw invalid(`action must be 1 to ${MAX_ACTION} characters`)
  if (input.detail !== undefined && Object.keys(input.detail).length > MAX_DETAIL_FIELDS)
    throw invalid(`detail has at most ${MAX_DETAIL_FIELDS} fields`)
  const scalar = (v: unknown) =>
    (typeof v === 'string' && v.length <= 500) || typeof v === 'boolean' || Number.isFinite(v)
  if (input.detail !== undefined && !Object.values(input.detail).every(scalar))
    throw invalid('detail values are strings (at most 500 characters), numbers or booleans')
  const expiresIn = input.expires_in ?? DEFAULT_EXPIRES_S
  if (!Number.isInteger(expiresIn) || expiresIn < MIN_EXPIRES_S || expiresIn > MAX_EXPIRES_S)
    throw invalid(`expires_in must be a whole number of seconds from ${MIN_EXPIRES_S} to ${MAX_EXPIRES_S}`)
  return expiresIn
}

/** What was asked, proven without being published: the SHA-256 of its JCS form (RFC 8785). */
const requestDigest = (row: ApprovalRow) =>
  createHash('sha256')
    .update(canonicalize({ action: row.action, ...(row.detail ? { detail: row.detail } : {}) }))
    .digest('base64url')

/** Receipts a settled approval on the ledger, in the transaction that settled it. */
async function receipt(deps: ApprovalDeps, trx: IdpDb, row: ApprovalRow) {
  const recorded = await deps.receipts.record(trx, {
    type: `approval.${row.status}`,
    subject: (await deps.accounts.byId(trx, row.user_id))!.did!,
    data: { approval_id: row.id, client_id: row.client_id, request_digest: requestDigest(row) },
  })
  await setReceipt(trx, row.id, recorded.leafHash)
  return { ...row, receipt: recorded.leafHash }
}

/** A client asks the user behind its access token to approve one action; it expires as a refusal. */
export async function createApproval(
  deps: ApprovalDeps,
  clientId: string,
  userId: string,
  input: ApprovalRequest,
) {
  const expiresIn = check(input)
  const id = `apr_${randomBytes(16).toString('base64url')}`
  const expiresAt = new Date(Date.now() + expiresIn * 1000)
  await inTransaction(deps.db, async (trx) => {
    await insertApproval(trx, {
      id,
      client_id: clientId,
      user_id: userId,
      action: input.action,
      detail: input.detail ?? null,
      expires_at: expiresAt,
    })
    await deps.jobs.enqueue(trx, EXPIRY_QUEUE, { id }, { startAfter: expiresAt })
  })
  return {
    approval_id: id,
    status: 'pending',
    expires_in: expiresIn,
    interval: deps.intervalS,
    approval_uri: `${deps.issuer}/ui/approvals/${id}`,
  }
}

/** The user answers: settled and receipted once; undefined when it is not the user's or no longer open. */
export async function decideApproval(
  deps: ApprovalDeps,
  userId: string,
  id: string,
  decision: 'approved' | 'denied',
) {
  return inTransaction(deps.db, async (trx) => {
    const settled = await settle(trx, id, decision, userId)
    return settled && receipt(deps, trx, settled)
  })
}

/** An approval nobody answered in time ends as `expired`, a refusal, receipted like the others. */
export async function expireApproval(deps: ApprovalDeps, id: string) {
  return inTransaction(deps.db, async (trx) => {
    const expired = await settle(trx, id, 'expired')
    return expired && receipt(deps, trx, expired)
  })
}

const view = (row: ApprovalRow) => ({
  approval_id: row.id,
  status: row.status,
  action: row.action,
  ...(row.detail ? { detail: row.detail } : {}),
  expires_at: Math.floor(row.expires_at.getTime() / 1000),
  ...(row.decided_at ? { decided_at: Math.floor(row.decided_at.getTime() / 1000) } : {}),
  ...(row.receipt ? { receipt: row.receipt } : {}),
})

/**
 * The client polls for the outcome, no faster than the interval (`slow_down` otherwise, as RFC
 * 8628 §3.5 has it). Another client's approval, or an unknown one, is 404.
 */
export async function pollApproval(deps: ApprovalDeps, clientId: string, id: string) {
  const row = await inTransaction(deps.db, (trx) => recordPoll(trx, id, clientId))
  if (!row) throw idpError('not_found', 'no such approval for this client')
  if (row.last_polled_at && Date.now() - row.last_polled_at.getTime() < deps.intervalS * 1000)
    throw idpError('slow_down', `poll at most every ${deps.intervalS} s`)
  // the expiry job may not have run yet: the deadline decides, not the job
  if (row.status === 'pending' && row.expires_at <= new Date())
    return view((await expireApproval(deps, id)) ?? (await approvalById(deps.db, id))!)
  return view(row)
}

/** Expires each approval at its deadline, even when nobody polls it. */
export async function startApprovalExpiry(deps: ApprovalDeps) {
  await deps.jobs.queue(EXPIRY_QUEUE)
  await deps.jobs.work<{ id: string }>(EXPIRY_QUEUE, async ({ id }) => {
    await expireApproval(deps, id)
  })
}
