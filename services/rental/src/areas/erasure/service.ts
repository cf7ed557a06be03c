import { createHash } from 'node:crypto'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { AuthService } from '../auth/index.ts'
import type { DisputeService } from '../disputes/index.ts'
import type { EndingService } from '../ending/index.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { FileService } from '../files/index.ts'
import type { IncidentService } from '../incidents/index.ts'
import type { RatingService } from '../ratings/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { TokenService } from '../tokens/index.ts'
import type { RetentionService } from '../retention/index.ts'
import type { WebhookService } from '../webhooks/index.ts'
import type { ExportService } from '../exports/index.ts'
import { type ErasureAnswer, erasureOf, insertErasure } from './store.ts'

export interface ErasureDeps {
  ctx: Pick<RentalContext, 'db' | 'receipts' | 'now'>
  orgs: OrgService
  auth: AuthService
  tokens: TokenService
  webhooks: WebhookService
  files: FileService
  tasks: TaskService
  engagements: EngagementService
  disputes: DisputeService
  ratings: RatingService
  incidents: IncidentService
  ending: EndingService
  events: EventService
  retention: RetentionService
  exports: ExportService
}

export interface Eraser {
  orgId: string
  /** SHA-256 of the eraser's session cookie id: its second call answers the first's result. */
  sessionHash: Buffer
  actor: Actor
}

/** What erasure keeps, and why (docs/rental/erasure.md). */
export const KEPT = [
  'the organization row, its name replaced by a pseudonym (money records name it)',
  'engagements, escrows, transfers and wallet balances (the ledger of money)',
  'invoices, credit notes, refunds, disputes and their resolutions (the law keeps invoices)',
  'receipts and the ledger’s journal (hashes and amounts, no personal data)',
  'task rows with their hashes, prices and receipts (their texts and outputs deleted)',
  'ratings (scores, comments replaced by [erased]), incidents and disputes (texts the organization wrote replaced by [erased])',
  'refund reasons: part of the refund body the provider signed, of its receipt and of its credit note',
]

const refused = (message: string) => rentalError('erasure_refused', message)

/** The refusals, before anything changes: a legal hold, live disputes, escrows still owed to an agent. */
async function checkErasable(deps: ErasureDeps, db: RentalDb, orgId: string) {
  const hold = await deps.retention.anyHoldOf(orgId, db)
  if (hold)
    throw refused(
      `the organization's data is under legal hold ${hold.id} (${hold.scope}): it cannot be erased until the hold is released`,
    )
  const disputes = await deps.disputes.liveOf(db, orgId)
  if (disputes.length)
    throw refused(
      `the organization has open disputes (${disputes.join(', ')}): withdraw them or wait for their resolution`,
    )
}

/** Escrows opened for tasks that completed: owed to the agent on the client's signed release, so not returned. */
async function owedEscrows(deps: ErasureDeps, orgId: string) {
  const open = (await deps.engagements.openedEscrowsOfOrg(orgId)).filter(
    (e) => e.state === 'open' && e.task_id,
  )
  const states = await deps.tasks.statesOf(open.map((e) => e.task_id!))
  return open.filter((e) => states.get(e.task_id!) === 'completed').map((e) => e.id)
}

/**
 * `POST /api/clients/erase`: refusals first (hold, disputes, releases owed: 409 naming them);
 * then every active engagement ended through the ending area (running tasks canceled, open
 * escrows returned to the wallet, each its `engagement.ended` receipt); then, in one transaction
 * with the organization locked: files crypto-shredded, task texts and outputs wiped, API tokens
 * and webhooks deleted, members and invitations deleted, sessions ended (the eraser's kept, to
 * read this answer again) and their profile wiped, events pseudonymised, a `data.erased` receipt.
 */
export async function eraseClient(
  deps: ErasureDeps,
  eraser: Eraser,
  confirm: string,
): Promise<ErasureAnswer> {
  const { db } = deps.ctx
  const again = await erasureOf(db, { sessionHash: eraser.sessionHash })
  if (again) return again
  if (confirm !== eraser.orgId)
    throw rentalError('invalid_request', 'confirm must be your organization’s id: erasure cannot be undone')
  await checkErasable(deps, db, eraser.orgId)
  const owed = await owedEscrows(deps, eraser.orgId)
  if (owed.length)
    throw refused(
      `escrows of completed tasks await your release (${owed.join(', ')}): release or dispute them first`,
    )
  const ended: ErasureAnswer['engagements_ended'] = []
  for (const id of await deps.engagements.idsOfOrg(eraser.orgId, ['active'])) {
    try {
      const end = await deps.ending.endCanceling(eraser.orgId, id, eraser.actor)
      ended.push({ engagement_id: id, returned_fils: end.figures.returned_fils, receipt_id: end.receipt.id })
    } catch (err) {
      // a racing end of the same engagement: it is ended either way
      if ((err as { code?: string }).code !== 'engagement_ended') throw err
    }
  }
  return inTransaction(db, async (trx) => {
    await deps.orgs.lock(trx, eraser.orgId)
    const raced = await erasureOf(trx, { orgId: eraser.orgId })
    if (raced) return raced
    await checkErasable(deps, trx, eraser.orgId)
    const now = deps.ctx.now()
    const files = await deps.files.eraseOrg(trx, { orgId: eraser.orgId, actor: eraser.actor })
    const taskTexts = await deps.tasks.eraseTexts(trx, eraser.orgId)
    const apiTokens = await deps.tokens.eraseOrg(trx, eraser.orgId)
    const webhooks = await deps.webhooks.eraseOrg(trx, eraser.orgId)
    // the tenant exports' sealed archives hold the organization's whole record
    const exports = await deps.exports.eraseOrg(trx, eraser.orgId)
    // free texts the organization wrote, replaced by [erased]: receipts hold their hashes, not them
    const ratings = await deps.ratings.eraseOrg(trx, eraser.orgId)
    const incidents = await deps.incidents.eraseOrg(trx, eraser.orgId)
    const disputeReasons = await deps.disputes.eraseReasonsOf(trx, eraser.orgId)
    const members = await deps.orgs.eraseOrg(trx, eraser.orgId)
    const sessions = await deps.auth.eraseSessionsOf(trx, members.subjects, eraser.sessionHash)
    const counts = {
      members: members.members,
      sessions,
      api_tokens: apiTokens,
      webhooks,
      exports,
      files: files.files,
      file_bytes: files.bytes,
      task_texts: taskTexts,
      rating_comments: ratings.comments,
      references: ratings.references,
      incident_texts: incidents.incidents,
      incident_notes: incidents.notes,
      dispute_reasons: disputeReasons,
    }
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'data.erased',
      subject: eraser.orgId,
      data: {
        org_id: eraser.orgId,
        engagements_ended: ended.map((e) => e.engagement_id),
        deleted: counts,
        erased_at: now.toISOString(),
      },
    })
    await deps.events.record(trx, {
      orgId: eraser.orgId,
      type: 'client.erased',
      actor: eraser.actor,
      data: { receipt_id: receipt.id, engagements_ended: ended.length },
    })
    const deleted = { ...counts, events_pseudonymised: await deps.events.eraseOrg(trx, eraser.orgId) }
    const answer: ErasureAnswer = {
      org_id: eraser.orgId,
      state: 'erased',
      erased_at: now.toISOString(),
      engagements_ended: ended,
      deleted,
      kept: KEPT,
      receipt: { id: receipt.id, leaf_hash: receipt.leafHash },
    }
    await insertErasure(trx, { orgId: eraser.orgId, sessionHash: eraser.sessionHash, answer, at: now })
    return answer
  })
}

/**
 * The idp deleted the organization's last owner and the organization asked to be erased then
 * (its retention policy's `erase_on_owner_deletion`): erasure as POST /api/clients/erase does it,
 * by the system, once (a second deletion event answers the first erasure). A refusal (a legal hold,
 * live disputes, escrows owed to an agent) erases nothing and is answered with its reason.
 */
export async function eraseForDeletedOwner(deps: ErasureDeps, orgId: string, actor: Actor) {
  const sessionHash = createHash('sha256').update(`idp:user.deleted:${orgId}`).digest()
  try {
    const answer = await eraseClient(deps, { orgId, sessionHash, actor }, orgId)
    return { erased: true as const, receipt: answer.receipt }
  } catch (err) {
    if ((err as { code?: string }).code !== 'erasure_refused') throw err
    return { erased: false as const, reason: (err as Error).message }
  }
}
