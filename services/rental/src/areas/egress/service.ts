import type { LookupAddress } from 'node:dns'
import { PublicUrlError, resolvePublic } from '@svc/kit/http/public-fetch'
import type { RentalContext } from '../../context.ts'
import { inTransaction } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { type EngagementRow, type EngagementService, hasMessagePart } from '../engagements/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import { insertPolicy, latestPolicy, type PolicyKind } from './store.ts'

export interface EgressDeps extends RentalContext {
  engagements: EngagementService
  events: EventService
}

export interface WebPolicy {
  allowed_domains: string[]
  denied_domains: string[]
  max_fetches_per_task: number | null
  max_bytes: number | null
}
/** What an egress check allowed: the addresses the URL's name resolved to and were checked, if any. */
export interface EgressCheck {
  addresses?: LookupAddress[]
}
export interface EgressPolicy {
  allow: Array<{ host: string; ports?: number[] | undefined }>
}
type PolicyOf<K extends PolicyKind> = K extends 'web' ? WebPolicy : EgressPolicy

/** Before any is set: the web tools fetch anywhere public, outbound calls go anywhere public. */
const DEFAULTS = {
  web: { allowed_domains: [], denied_domains: [], max_fetches_per_task: null, max_bytes: null } as WebPolicy,
  egress: null,
}

const lower = (host: string) => host.toLowerCase().replace(/\.$/, '')

/** `*.example.com` matches the subdomains of example.com (not itself); anything else matches exactly. */
export function hostMatches(pattern: string, host: string) {
  const p = lower(pattern)
  const h = lower(host)
  return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p
}

const defaultPort = (url: URL) => (url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443)

export function policyView<K extends PolicyKind>(
  engagementId: string,
  kind: K,
  row: { version: number; policy: unknown; created_at: Date } | undefined,
) {
  return {
    engagement_id: engagementId,
    version: row?.version ?? 0,
    policy: (row?.policy ?? DEFAULTS[kind]) as PolicyOf<K> | null,
    updated_at: row?.created_at.toISOString() ?? null,
  }
}

export async function policyDetail(deps: EgressDeps, orgId: string, engagementId: string, kind: PolicyKind) {
  if (!(await deps.engagements.engagementOf(orgId, engagementId)))
    throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
  return policyView(engagementId, kind, await latestPolicy(deps.db, engagementId, kind))
}

function checkWeb(policy: WebPolicy) {
  const both = policy.allowed_domains.filter((d) => policy.denied_domains.some((x) => lower(x) === lower(d)))
  if (both.length > 0) throw rentalError('invalid_policy', `${both[0]} is both allowed and denied`)
  return {
    ...policy,
    allowed_domains: [...new Set(policy.allowed_domains.map(lower))],
    denied_domains: [...new Set(policy.denied_domains.map(lower))],
  }
}

function checkEgressPolicy(policy: EgressPolicy) {
  return {
    allow: policy.allow.map((a) => ({
      host: lower(a.host),
      ...(a.ports ? { ports: [...new Set(a.ports)].sort((x, y) => x - y) } : {}),
    })),
  }
}

/** The engagement's part of its tasks' message once it has a web policy (the web tool is offered then). */
const WEB_POLICY_PART = 'web_policy'

/** Whether the engagement has a web policy (a web policy is never removed, only replaced). */
export const hasWebPolicy = (engagement: Pick<EngagementRow, 'message_parts'>) =>
  hasMessagePart(engagement, WEB_POLICY_PART)

/**
 * Sets the engagement's web or egress policy as a new version (the engagement locked; If-Match
 * names the version it replaces), an `engagement.policy_changed` event in the same transaction.
 */
export async function setPolicy<K extends PolicyKind>(
  deps: EgressDeps,
  who: { orgId: string; subject: string; actor: Actor },
  engagementId: string,
  kind: K,
  policy: PolicyOf<K>,
  ifMatch: number | undefined,
) {
  const checked = kind === 'web' ? checkWeb(policy as WebPolicy) : checkEgressPolicy(policy as EgressPolicy)
  return inTransaction(deps.db, async (trx) => {
    const engagement = await deps.engagements.engagementOf(who.orgId, engagementId, { trx, lock: true })
    if (!engagement) throw rentalError('engagement_not_found', `no engagement ${engagementId}`)
    const state: string = engagement.state
    if (state !== 'active' && state !== 'pending')
      throw rentalError('engagement_ended', `the engagement is ${state}: its policies no longer change`)
    const current = await latestPolicy(trx, engagementId, kind)
    const version = current?.version ?? 0
    if (ifMatch !== undefined && ifMatch !== version)
      throw rentalError(
        'precondition_failed',
        `If-Match names version ${ifMatch}; the ${kind} policy is at version ${version}`,
      )
    const row = await insertPolicy(trx, {
      engagement_id: engagementId,
      kind,
      version: version + 1,
      org_id: who.orgId,
      policy: checked,
      actor: who.subject,
      created_at: deps.now(),
    })
    // the engagement's tasks are offered the web tool from now: its row says so (no read per task)
    if (kind === 'web' && !hasWebPolicy(engagement))
      await deps.engagements.setMessagePart(trx, engagementId, WEB_POLICY_PART, true)
    await deps.events.record(trx, {
      orgId: who.orgId,
      type: 'engagement.policy_changed',
      stream: engagementId,
      subjects: { engagement_id: engagementId },
      actor: who.actor,
      data: { kind, version: row.version, policy: checked },
    })
    return policyView(engagementId, kind, row)
  })
}

/**
 * Why the egress policy refuses `url` (`why`), or null when it allows it, with the addresses its
 * name resolved to and were checked (the connection is pinned to them).
 */
async function refusal(
  policy: EgressPolicy,
  url: string,
  allowPrivate: boolean,
): Promise<{ why: string | null; addresses?: LookupAddress[] }> {
  // the kit's guard: https, no metadata address, and unless private ones are allowed a name that
  // resolves to public addresses only (the connection is then pinned to them)
  let addresses: LookupAddress[] | null
  try {
    addresses = await resolvePublic(url, { allowPrivate })
  } catch (err) {
    return {
      why: err instanceof PublicUrlError ? `the URL is refused: ${err.message}` : 'the URL is refused',
    }
  }
  const target = new URL(url)
  const host = target.hostname.replace(/^\[|\]$/g, '')
  const port = defaultPort(target)
  const entries = policy.allow.filter((a) => hostMatches(a.host, host))
  if (entries.length === 0) return { why: `${host} is outside the engagement's egress allow-list` }
  if (!entries.some((a) => a.ports === undefined || a.ports.includes(port)))
    return { why: `port ${port} of ${host} is outside the engagement's egress allow-list` }
  return addresses ? { why: null, addresses } : { why: null }
}

/**
 * Whether the engagement's outbound calls may reach `url`: anywhere public before an egress policy
 * is set; once set, only its allow-list (hosts, wildcards, ports). A refusal is an `egress.refused`
 * event and a 403 `egress_refused`. Called outside any transaction (it records its own). Answers
 * the addresses checked (when a name was resolved): the caller connects to those (DNS pinning).
 */
export async function checkEgress(
  deps: EgressDeps,
  engagementId: string,
  url: string,
  options: { allowPrivate: boolean; actor: Actor },
): Promise<EgressCheck> {
  const row = await latestPolicy(deps.db, engagementId, 'egress')
  if (!row) return {}
  const { why, addresses } = await refusal(row.policy as EgressPolicy, url, options.allowPrivate)
  if (why === null) return addresses ? { addresses } : {}
  let host = ''
  try {
    host = new URL(url).host
  } catch {
    // the reason says the URL is refused
  }
  await inTransaction(deps.db, (trx) =>
    deps.events.record(trx, {
      orgId: row.org_id,
      type: 'egress.refused',
      stream: engagementId,
      subjects: { engagement_id: engagementId },
      actor: options.actor,
      data: { host, reason: why, policy_version: row.version },
    }),
  )
  throw rentalError('egress_refused', why)
}
