import { isEd25519DidKey, type Page } from '@svc/kit'
import { randomBytes } from 'node:crypto'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { EndingService } from '../ending/index.ts'
import { bodyHash, type EngagementService, type SlaTeam } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { TaskService } from '../tasks/index.ts'
import * as store from './store.ts'
import type { TeamRow } from './store.ts'
import type { OrgClient } from '../../http/index.ts'

export interface TeamDeps {
  ctx: RentalContext
  engagements: EngagementService
  catalogue: CatalogueService
  tasks: TaskService
  events: EventService
  ending: EndingService
}

export interface NewTeam {
  name: string
  lead_did: string
  job_id: string
  members: Array<{ agent_did: string; share_bps: number; hop_fils?: number | undefined }>
  delegation?: Array<{ from: string; to: string[] }> | undefined
  max_depth: number
  task_budget_fils: number
}

export const newTeamId = () => `team_${randomBytes(12).toString('base64url')}`
const invalid = (message: string) => rentalError('invalid_team', message)
export const teamNotFound = (id: string) => rentalError('team_not_found', `no team ${id}`)

/** The team terms, checked: one lead, distinct members, shares at most 100 %, delegations inside the team. */
export function termsOf(teamId: string, input: NewTeam): SlaTeam {
  const dids = input.members.map((m) => m.agent_did)
  const seen = new Set<string>()
  for (const did of dids) {
    if (seen.has(did)) throw invalid(`duplicate member ${did}`)
    seen.add(did)
  }
  if (seen.has(input.lead_did)) throw invalid('the lead cannot also be a member')
  for (const did of [input.lead_did, ...dids])
    if (!isEd25519DidKey(did)) throw invalid(`${did.slice(0, 80)} is not an Ed25519 did:key`)
  const shares = input.members.reduce((sum, m) => sum + m.share_bps, 0)
  if (shares > 10_000) throw invalid(`the members' shares add up to ${shares} bps, over 10000 (100 %)`)
  const inTeam = new Set([input.lead_did, ...dids])
  const delegation = input.delegation ?? [{ from: input.lead_did, to: dids }]
  const froms = new Set<string>()
  for (const rule of delegation) {
    if (!inTeam.has(rule.from)) throw invalid(`delegation from ${rule.from.slice(0, 80)}: not in the team`)
    if (froms.has(rule.from)) throw invalid(`two delegation rules from ${rule.from.slice(0, 80)}`)
    froms.add(rule.from)
    for (const to of rule.to) {
      if (!seen.has(to)) throw invalid(`delegation to ${to.slice(0, 80)}: not a member`)
      if (to === rule.from) throw invalid(`${to.slice(0, 80)} cannot delegate to itself`)
    }
  }
  return {
    team_id: teamId,
    lead_did: input.lead_did,
    members: input.members.map((m) => ({
      agent_did: m.agent_did,
      share_bps: m.share_bps,
      hop_fils: m.hop_fils ?? 0,
    })),
    delegation,
    max_depth: input.max_depth,
    task_budget_fils: input.task_budget_fils,
  }
}

export function teamView(row: TeamRow) {
  const terms = row.terms as SlaTeam
  return {
    id: row.id,
    name: row.name,
    state: row.state,
    lead_did: row.lead_did,
    job_id: row.job_id,
    terms: {
      members: terms.members,
      delegation: terms.delegation,
      max_depth: terms.max_depth,
      task_budget_fils: terms.task_budget_fils,
    },
    terms_hash: row.terms_hash,
    engagement_id: row.engagement_id,
    created_at: row.created_at.toISOString(),
    hired_at: row.hired_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
  }
}

const teamEvent = (
  deps: TeamDeps,
  trx: RentalDb,
  team: { id: string; org_id: string },
  actor: Actor,
  type: 'team.created' | 'team.hired' | 'team.hop' | 'team.ended',
  data: Record<string, unknown>,
  subjects: Record<string, string> = {},
) =>
  deps.events.record(trx, {
    orgId: team.org_id,
    type,
    stream: team.id,
    subjects: { team_id: team.id, ...subjects },
    actor,
    data,
  })
export { teamEvent }

export async function createTeam(deps: TeamDeps, orgId: string, input: NewTeam, actor: Actor) {
  const id = newTeamId()
  const terms = termsOf(id, input)
  const { job, agent } = await deps.catalogue.jobAndAgent(input.job_id, input.lead_did)
  if (!job) throw rentalError('job_not_found', `no job ${input.job_id}`)
  if (!agent) throw rentalError('agent_not_serving', `${input.lead_did} does not serve ${input.job_id}`)
  for (const m of terms.members)
    if (!(await deps.catalogue.agent(m.agent_did)))
      throw rentalError('unknown_team_agent', `${m.agent_did} is not in the catalogue`)
  const now = deps.ctx.now()
  await inTransaction(deps.ctx.db, async (trx) => {
    await store.insertTeam(trx, {
      id,
      org_id: orgId,
      name: input.name,
      lead_did: input.lead_did,
      job_id: input.job_id,
      terms: JSON.stringify(terms),
      terms_hash: bodyHash(terms),
      state: 'draft',
      created_by: actor.id,
      created_at: now,
    })
    await teamEvent(deps, trx, { id, org_id: orgId }, actor, 'team.created', {
      lead_did: input.lead_did,
      members: terms.members.length,
      terms_hash: bodyHash(terms),
    })
  })
  return teamView((await store.teamOf(deps.ctx.db, orgId, id))!)
}

export async function teamDetail(deps: TeamDeps, orgId: string, id: string) {
  const row = await store.teamOf(deps.ctx.db, orgId, id)
  if (!row) throw teamNotFound(id)
  return row
}

export async function teamList(deps: TeamDeps, orgId: string, page: Page) {
  const rows = await store.teamsOf(deps.ctx.db, orgId, page.limit, page.offset)
  return {
    teams: rows.map(teamView),
    total: await store.countTeams(deps.ctx.db, orgId),
    limit: page.limit,
    offset: page.offset,
  }
}

/**
 * One engagement on the lead, made by the engagements service's hire with the team terms in its
 * SLA body; the client signs it (and its escrow) at POST /api/engagements/{id}/signatures.
 */
export async function hireTeam(
  deps: TeamDeps,
  client: OrgClient,
  id: string,
  input: { client_did?: string | undefined },
  actor: Actor,
) {
  const team = await teamDetail(deps, client.orgId, id)
  if (team.state !== 'draft')
    throw rentalError('team_already_hired', `the team is ${team.state}: it is hired once`)
  const hired = await deps.engagements.hire(
    client,
    { job_id: team.job_id, agent_did: team.lead_did, client_did: input.client_did },
    actor,
    undefined,
    {
      body: team.terms as SlaTeam,
      claim: async (trx, engagementId) => {
        if (!(await store.markHired(trx, id, engagementId, deps.ctx.now())))
          throw rentalError('team_already_hired', 'the team was hired meanwhile')
        await teamEvent(deps, trx, team, actor, 'team.hired', { engagement_id: engagementId })
      },
    },
  )
  return { team: teamView((await store.teamOf(deps.ctx.db, client.orgId, id))!), ...hired }
}

/** A team task: a task of the lead's engagement (escrow, approvals, capacity as any task's). */
export async function teamTask(
  deps: TeamDeps,
  orgId: string,
  id: string,
  input: { text: string; async?: boolean | undefined },
  actor: Actor,
) {
  const team = await teamDetail(deps, orgId, id)
  if (team.state === 'ended')
    throw rentalError('team_ended', `the team is ended (since ${team.ended_at?.toISOString()})`)
  if (team.state !== 'hired' || !team.engagement_id)
    throw rentalError('team_not_hired', `the team is ${team.state}: hire it first`)
  const made = await deps.tasks.create(
    orgId,
    { engagement_id: team.engagement_id, text: input.text, async: input.async },
    actor,
  )
  return { team_id: id, ...made }
}
