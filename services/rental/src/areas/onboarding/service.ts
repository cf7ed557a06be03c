import { createHash, randomBytes } from 'node:crypto'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError, rentalErrors } from '../../errors.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { IdpAnswer, IdpOrganization } from './idp-org.ts'
import * as store from './store.ts'
import type { KyaRow, KybRow } from './store.ts'

export interface OnboardingDeps {
  ctx: Pick<RentalContext, 'db' | 'receipts' | 'now' | 'config'>
  events: EventService
  idp: IdpOrganization
}

export interface Caller {
  orgId: string
  actor: Actor
  /** One of the platform's operators (RENTAL_OPERATORS): reviews any organization's check. */
  operator?: boolean
}

export interface Business {
  domain: string
  entity_name: string
  jurisdiction: string
  registration: string
}

const sha256 = (text: string) => `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`

const newId = (prefix: 'kyb' | 'kya') => `${prefix}_${randomBytes(12).toString('base64url')}`

const OPEN: KybRow['state'][] = ['awaiting_domain', 'pending_review']

export function kybView(row: KybRow) {
  return {
    id: row.id,
    state: row.state,
    domain: row.domain,
    entity_name: row.entity_name,
    jurisdiction: row.jurisdiction,
    registration: row.registration,
    domain_verified: row.domain_verified,
    problems: row.problems as string[],
    publish_at: row.publish_at,
    owner_document: (row.owner_document ?? null) as Record<string, unknown> | null,
    checked_at: row.checked_at?.toISOString() ?? null,
    review: row.reviewed_at
      ? {
          decision: row.state === 'approved' ? ('approve' as const) : ('reject' as const),
          reason: row.review_reason,
          reviewed_at: row.reviewed_at.toISOString(),
        }
      : null,
    receipt_id: row.receipt_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  }
}

export function kyaView(row: KyaRow) {
  return {
    id: row.id,
    agent_did: row.agent_did,
    ok: row.ok,
    hits: row.hits as string[],
    history_count: row.history_count,
    history_error: row.history_error,
    idp_receipt: row.idp_receipt,
    created_at: row.created_at.toISOString(),
  }
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** 400 for a string with a lone surrogate: not text the idp (or its receipts' JSON) can carry. */
function wellFormed(fields: Record<string, string | undefined>) {
  for (const [name, value] of Object.entries(fields))
    if (value !== undefined && LONE_SURROGATE.test(value))
      throw rentalError('invalid_request', `body.${name} is not well-formed Unicode text`)
}

const kybState = (row: KybRow, move: string) =>
  rentalError('kyb_state', `the business check ${row.id} is ${row.state}: it cannot be ${move}`)

/** A 4XX of the idp about what the client sent: 400 naming it (never a 5XX). */
function refused(answer: IdpAnswer, what: string) {
  const error = answer.body.error as { message?: string } | string | undefined
  const said = typeof error === 'string' ? error : (error?.message ?? `status ${answer.status}`)
  return rentalError('invalid_request', `the identity provider refused the ${what}: ${said}`)
}

/** The organization's onboarding: its latest business check, its screenings, and what the gates ask. */
export async function onboardingStatus(deps: OnboardingDeps, orgId: string) {
  const latest = await store.latestKyb(deps.ctx.db, orgId)
  const { kybRequired, hireLimitFils } = deps.ctx.config.onboarding
  return {
    organization_id: orgId,
    kyb_required: kybRequired,
    hire_limit_fils: hireLimitFils,
    kyb_approved: await store.hasApprovedKyb(deps.ctx.db, orgId),
    kyb: latest ? kybView(latest) : null,
    kya: (await store.kyaOf(deps.ctx.db, orgId, 50)).map(kyaView),
  }
}

/**
 * The organization submits its business: the idp declares it for the rental's own idp
 * organization (`POST /orgs/kyb`, which answers the owner document the domain must publish) and
 * checks the domain at once (`POST /orgs/kyb/check`), the two alone among this instance's calls.
 * A verified domain waits for an operator (`pending_review`); otherwise the check waits for the
 * domain (`awaiting_domain`), and submitting again checks again. Each submission is receipted
 * (`kyb.submitted`: the domain, whether it verified, and a hash of the declared details).
 */
export async function submitKyb(deps: OnboardingDeps, caller: Caller, input: Business) {
  wellFormed({ ...input })
  const business = { ...input, domain: input.domain.toLowerCase() }
  const before = await store.latestKyb(deps.ctx.db, caller.orgId)
  if (before && (before.state === 'pending_review' || before.state === 'approved'))
    throw kybState(before, 'submitted again')
  const { declared, checked } = await deps.idp.exclusive(async () => {
    const declared = await deps.idp.call('POST', '/orgs/kyb', business)
    if (declared.status !== 200) throw refused(declared, 'declaration')
    const checked = await deps.idp.call('POST', '/orgs/kyb/check')
    if (checked.status !== 200) throw refused(checked, 'domain check')
    return { declared: declared.body, checked: checked.body }
  })
  const problems = Array.isArray(checked.problems) ? checked.problems.map(String).slice(0, 20) : []
  // another instance's declaration between ours and the check: the check was of its domain
  const ours = checked.domain === business.domain
  if (!ours) problems.push('another declaration was checked meanwhile: submit again')
  const verified = ours && checked.verified === true
  const now = deps.ctx.now()
  const details = {
    state: verified ? ('pending_review' as const) : ('awaiting_domain' as const),
    ...business,
    domain_verified: verified,
    problems: JSON.stringify(problems),
    attestation: typeof declared.attestation === 'string' ? declared.attestation : null,
    owner_document: JSON.stringify(declared.owner_document ?? null),
    publish_at: typeof declared.publish_at === 'string' ? declared.publish_at : null,
    checked_at: now,
    submitted_by: caller.actor.id,
    updated_at: now,
  }
  try {
    const id = await inTransaction(deps.ctx.db, async (trx) => {
      const latest = await store.latestKyb(trx, caller.orgId, true)
      if (latest && (latest.state === 'pending_review' || latest.state === 'approved'))
        throw kybState(latest, 'submitted again')
      const id = latest && OPEN.includes(latest.state) ? latest.id : newId('kyb')
      const receipt = await deps.ctx.receipts.record(trx, {
        type: 'kyb.submitted',
        subject: id,
        data: {
          org_id: caller.orgId,
          kyb_id: id,
          domain: business.domain,
          domain_verified: verified,
          details_sha256: sha256(
            JSON.stringify([business.entity_name, business.jurisdiction, business.registration]),
          ),
        },
      })
      if (id === latest?.id) await store.updateKyb(trx, id, { ...details, receipt_id: receipt.id })
      else
        await store.insertKyb(trx, {
          id,
          org_id: caller.orgId,
          ...details,
          receipt_id: receipt.id,
          created_at: now,
        })
      await deps.events.record(trx, {
        orgId: caller.orgId,
        type: 'onboarding.kyb_submitted',
        subjects: { kyb_id: id },
        actor: caller.actor,
        data: {
          state: details.state,
          domain: business.domain,
          domain_verified: verified,
          receipt_id: receipt.id,
        },
      })
      return id
    })
    return kybView((await store.kybById(deps.ctx.db, id))!)
  } catch (err) {
    // two first submissions at once: the unique open check lets one in
    if ((err as { code?: string }).code === '23505')
      throw rentalError('kyb_state', 'another business check of the organization was submitted meanwhile')
    throw err
  }
}

/**
 * An operator approves a verified check (`pending_review`) or rejects an open one with a reason;
 * receipted as `kyb.reviewed` (the decision, and the reason as a hash). Another organization's
 * check is not found for anyone but an operator; a member of its own organization who is not one
 * is refused.
 */
export async function reviewKyb(
  deps: OnboardingDeps,
  caller: Caller,
  id: string,
  input: { decision: 'approve' | 'reject'; reason?: string | undefined },
) {
  wellFormed({ reason: input.reason })
  const reason = input.reason?.trim() ?? ''
  await inTransaction(deps.ctx.db, async (trx) => {
    const row = await store.kybById(trx, id, true)
    if (!row || (!caller.operator && row.org_id !== caller.orgId))
      throw rentalError('kyb_not_found', `no business check ${id}`)
    if (!caller.operator)
      throw rentalError('forbidden', 'only the platform’s operators review business checks')
    if (input.decision === 'approve' && row.state !== 'pending_review')
      throw row.state === 'awaiting_domain'
        ? rentalError('kyb_state', `the business check ${id} is awaiting_domain: its domain is not verified`)
        : kybState(row, 'approved')
    if (input.decision === 'reject') {
      if (!OPEN.includes(row.state)) throw kybState(row, 'rejected')
      if (reason === '') throw rentalError('reason_required', 'give the reason of the rejection')
    }
    const now = deps.ctx.now()
    const state = input.decision === 'approve' ? ('approved' as const) : ('rejected' as const)
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'kyb.reviewed',
      subject: id,
      data: {
        org_id: row.org_id,
        kyb_id: id,
        domain: row.domain,
        decision: input.decision,
        ...(reason ? { reason_sha256: sha256(reason) } : {}),
      },
    })
    await store.updateKyb(trx, id, {
      state,
      reviewed_by: caller.actor.id,
      reviewed_at: now,
      review_reason: reason || null,
      receipt_id: receipt.id,
      updated_at: now,
    })
    await deps.events.record(trx, {
      orgId: row.org_id,
      type: 'onboarding.kyb_reviewed',
      subjects: { kyb_id: id },
      actor: caller.actor,
      data: { decision: input.decision, state, receipt_id: receipt.id },
    })
  })
  return kybView((await store.kybById(deps.ctx.db, id))!)
}

/**
 * Screens an agent for the organization through the idp (`POST /orgs/agents/screen`: the
 * platform's deny list and the agent's ledger history), keeping the outcome with the leaf hash of
 * the idp's `kya.screening` receipt, and an event naming it.
 */
export async function screenAgent(
  deps: OnboardingDeps,
  caller: Caller,
  agentDid: string,
  input: { owner?: string | undefined },
) {
  wellFormed({ owner: input.owner })
  const answer = await deps.idp.call('POST', '/orgs/agents/screen', {
    did: agentDid,
    ...(input.owner ? { owner: input.owner } : {}),
  })
  if (answer.status !== 200) throw refused(answer, 'screening')
  const body = answer.body
  if (typeof body.ok !== 'boolean' || typeof body.receipt !== 'string')
    throw rentalErrors.errorWith(
      502,
      'idp_unavailable',
      'the identity provider’s screening answer is malformed',
    )
  const row: KyaRow = {
    id: newId('kya'),
    org_id: caller.orgId,
    agent_did: agentDid,
    ok: body.ok,
    hits: (Array.isArray(body.hits) ? body.hits.map(String) : []) as never,
    history_count: Array.isArray(body.history) ? body.history.length : 0,
    history_error: typeof body.history_error === 'string' ? body.history_error : null,
    idp_receipt: body.receipt,
    screened_by: caller.actor.id,
    created_at: deps.ctx.now(),
  }
  await inTransaction(deps.ctx.db, async (trx) => {
    await store.insertKya(trx, { ...row, hits: JSON.stringify(row.hits) })
    await deps.events.record(trx, {
      orgId: caller.orgId,
      type: 'onboarding.kya_screened',
      subjects: { kya_id: row.id },
      actor: caller.actor,
      data: { agent_did: agentDid, ok: row.ok, hits: row.hits, idp_receipt: row.idp_receipt },
    })
  })
  return kyaView(row)
}

/** The gates (RENTAL_KYB_REQUIRED): 403 `kyb_required` unless the organization's check is approved. */
export async function assertKyb(deps: OnboardingDeps, db: RentalDb, orgId: string, what: string) {
  if (!deps.ctx.config.onboarding.kybRequired) return
  if (!(await store.hasApprovedKyb(db, orgId)))
    throw rentalError('kyb_required', `${what} needs an approved business check (POST /api/onboarding/kyb)`)
}
