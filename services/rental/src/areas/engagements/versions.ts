import { createHash } from 'node:crypto'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import { PLATFORM_ORG_ID as PLATFORM_ORG } from '../orgs/index.ts'
import { bodyHash, signedBy } from './bodies.ts'
import { checkAgentDid, engagementEvent, engagementNotFound } from './service.ts'
import { type EngagementRow, engagementOf } from './store.ts'
import * as terms from './terms-store.ts'

/** SemVer 2.0.0, the expression semver.org gives (§ "Is there a suggested regular expression"). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/

/** Numeric identifiers have no leading zeros: the longer is larger, else the string order is. */
const compareNumeric = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
const isNumeric = (s: string) => /^\d+$/.test(s)

/** SemVer 2.0.0 §11 precedence (build metadata ignored): negative when a < b, 0 when equal. */
export function compareSemver(a: string, b: string): number {
  const [pa, pb] = [SEMVER.exec(a), SEMVER.exec(b)]
  if (!pa || !pb) throw new Error('not semver')
  for (const i of [1, 2, 3]) {
    const c = compareNumeric(pa[i]!, pb[i]!)
    if (c) return Math.sign(c)
  }
  const [ra, rb] = [pa[4]?.split('.'), pb[4]?.split('.')]
  if (!ra || !rb) return ra ? -1 : rb ? 1 : 0 // a pre-release is below its release
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    const [x, y] = [ra[i], rb[i]]
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1
    const [nx, ny] = [isNumeric(x), isNumeric(y)]
    const c = nx && ny ? compareNumeric(x, y) : nx ? -1 : ny ? 1 : x < y ? -1 : x > y ? 1 : 0
    if (c) return Math.sign(c)
  }
  return 0
}

export type AddendumBody = {
  type: 'svc.addendum'
  v: 1
  engagement_id: string
  sla_hash: string
  agent_did: string
  client_did: string
  provider_did: string
  from_version: string | null
  to_version: string
  card_hash: string
  released_at: string
}

/** The addendum moving the engagement to `version`: built from records only, so it is the same each time it is asked. */
export const addendumOf = (engagement: EngagementRow, version: terms.VersionRow): AddendumBody => ({
  type: 'svc.addendum',
  v: 1,
  engagement_id: engagement.id,
  sla_hash: engagement.sla_hash,
  agent_did: engagement.agent_did,
  client_did: engagement.client_did,
  provider_did: engagement.provider_did,
  from_version: engagement.agent_version,
  to_version: version.version,
  card_hash: version.card_hash,
  released_at: version.released_at.toISOString(),
})

const versionView = (v: terms.VersionRow) => ({
  agent_did: v.agent_did,
  version: v.version,
  changelog: v.changelog,
  card_hash: v.card_hash,
  provider_org_id: v.provider_org_id,
  released_at: v.released_at.toISOString(),
  receipt_id: v.receipt_id,
})

type VersionContext = Pick<RentalContext, 'db' | 'now' | 'receipts'>

/**
 * A provider releases a version of its agent (an operator for the platform's built-in agents):
 * SemVer, above the agent's latest (the releases of one agent are taken one at a time), with the
 * agent card's hash at that version. The release is an event of the provider's organization and a
 * receipt (`agent.version_released`), in one transaction.
 */
export async function releaseVersion(
  ctx: VersionContext,
  who: { orgId: string; operator: boolean; subject: string; actor: Actor; events: EventService },
  catalogue: Pick<CatalogueService, 'isProviderOf'>,
  did: string,
  input: { version: string; changelog: string; card_hash: string },
) {
  checkAgentDid(did)
  const provider = (await catalogue.isProviderOf(who.orgId, did))
    ? who.orgId
    : who.operator && (await catalogue.isProviderOf(PLATFORM_ORG, did))
      ? PLATFORM_ORG
      : undefined
  if (!provider) throw rentalError('forbidden', `your organization does not provide the agent ${did}`)
  if (!SEMVER.test(input.version))
    throw rentalError(
      'invalid_version',
      `${input.version.slice(0, 100)} is not a SemVer 2.0.0 version (like 1.4.0)`,
    )
  const changelog = input.changelog.trim()
  if (changelog === '') throw rentalError('invalid_request', 'changelog must not be blank')
  return inTransaction(ctx.db, async (trx) => {
    await terms.lockAgentVersions(trx, did)
    const latest = await terms.latestVersion(trx, did)
    if (latest && compareSemver(input.version, latest.version) <= 0)
      throw rentalError(
        'version_conflict',
        latest.version === input.version
          ? `version ${input.version} is released already`
          : `the agent's latest version is ${latest.version}: a release must be above it`,
      )
    const at = ctx.now()
    const receipt = await ctx.receipts.record(trx, {
      type: 'agent.version_released',
      subject: did,
      data: {
        agent_did: did,
        version: input.version,
        card_hash: input.card_hash,
        changelog_sha256: createHash('sha256').update(changelog).digest('hex'),
        provider_org_id: provider,
        released_at: at.toISOString(),
      },
    })
    const row = await terms.insertVersion(trx, {
      agent_did: did,
      version: input.version,
      changelog,
      card_hash: input.card_hash,
      provider_org_id: provider,
      released_by: who.subject,
      receipt_id: receipt.id,
      released_at: at,
    })
    await who.events.record(trx, {
      orgId: provider,
      type: 'agent.version_released',
      subjects: { agent_did: did },
      actor: who.actor,
      data: { version: row.version, card_hash: row.card_hash, receipt_id: receipt.id },
    })
    return versionView(row)
  })
}

/** The engagement's version (null: the initial one, no version released when it was hired), and the newer one pending. */
async function versionState(db: RentalDb, engagement: EngagementRow) {
  const latest = await terms.latestVersion(db, engagement.agent_did)
  const current = engagement.agent_version
    ? await terms.versionOf(db, engagement.agent_did, engagement.agent_version)
    : undefined
  const pending = latest && latest.version !== engagement.agent_version ? latest : undefined
  return { current, pending }
}

export async function engagementVersion(ctx: Pick<RentalContext, 'db'>, orgId: string, id: string) {
  const engagement = await engagementOf(ctx.db, orgId, id)
  if (!engagement) throw engagementNotFound(id)
  const { current, pending } = await versionState(ctx.db, engagement)
  const addendum = pending && addendumOf(engagement, pending)
  return {
    engagement_id: id,
    agent_did: engagement.agent_did,
    version: engagement.agent_version,
    card_hash: current?.card_hash ?? null,
    pending: pending
      ? { ...versionView(pending), addendum: { body: addendum!, hash: bodyHash(addendum) } }
      : null,
    addenda: (await terms.addendaOf(ctx.db, id)).map((a) => ({
      from_version: a.from_version,
      to_version: a.to_version,
      card_hash: a.card_hash,
      hash: a.hash,
      receipt_id: a.receipt_id,
      accepted_at: a.accepted_at.toISOString(),
    })),
  }
}

/**
 * The client accepts the pending version: its Ed25519 signature over the JCS bytes of the
 * addendum (checked as the SLA's at signing) binds the version's card hash. The engagement is
 * locked: of two acceptances one moves it, the other finds nothing pending (409). The addendum,
 * a receipt (`engagement.version_accepted`) and an event in one transaction; later tasks go to it.
 */
export async function acceptVersion(
  ctx: VersionContext,
  who: { orgId: string; subject: string; actor: Actor; events: EventService },
  id: string,
  input: { addendum_hash: string; signature: string },
) {
  await inTransaction(ctx.db, async (trx) => {
    const engagement = await engagementOf(trx, who.orgId, id, true)
    if (!engagement) throw engagementNotFound(id)
    const state: string = engagement.state
    if (state !== 'active' && state !== 'pending')
      throw rentalError('engagement_ended', `the engagement is ${state}: it takes no new version`)
    const { pending } = await versionState(trx, engagement)
    const on = engagement.agent_version ?? 'the initial version'
    if (!pending)
      throw rentalError(
        'version_not_pending',
        `the engagement is on ${on}, the agent's latest: nothing to accept`,
      )
    const body = addendumOf(engagement, pending)
    const hash = bodyHash(body)
    if (hash !== input.addendum_hash)
      throw rentalError(
        'version_not_pending',
        `the engagement is on ${on}; the pending version is ${pending.version}, whose addendum is ${hash}`,
      )
    if (!signedBy(engagement.client_did, body, input.signature))
      throw rentalError('bad_signature', 'signature is not the client’s signature of the addendum body')
    const at = ctx.now()
    const receipt = await ctx.receipts.record(trx, {
      type: 'engagement.version_accepted',
      subject: id,
      data: {
        ...body,
        addendum_hash: hash,
        client_signature: input.signature,
        accepted_at: at.toISOString(),
      },
    })
    await terms.insertAddendum(trx, {
      engagement_id: id,
      to_version: pending.version,
      org_id: who.orgId,
      from_version: engagement.agent_version,
      card_hash: pending.card_hash,
      body: JSON.stringify(body),
      hash,
      signature: input.signature,
      receipt_id: receipt.id,
      accepted_by: who.subject,
      accepted_at: at,
    })
    await terms.setAgentVersion(trx, id, pending.version)
    await engagementEvent(who.events, trx, who.orgId, id, who.actor, 'engagement.version_accepted', {
      from_version: engagement.agent_version,
      to_version: pending.version,
      card_hash: pending.card_hash,
      addendum_hash: hash,
      receipt_id: receipt.id,
    })
  })
  return engagementVersion(ctx, who.orgId, id)
}
