import { Fils, Lang } from '@svc/kit'
import { type Static, Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor, EventService } from '../events/index.ts'
import { engagementEvent, engagementNotFound } from './service.ts'
import { engagementOf, engagementWithConfig, insertConfigVersion } from './store.ts'

const SettingFils = Fils({ minimum: 0, maximum: 1_000_000_000 })
const ApprovalMode = Type.Union([Type.Literal('never'), Type.Literal('always'), Type.Literal('above_price')])
const Approval = Type.Object(
  {
    mode: ApprovalMode,
    above_fils: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    expires_s: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 2_592_000,
        description: 'how long an approval waits for a decision (default 86400: 24 h)',
      }),
    ),
    separate_approver: Type.Optional(
      Type.Boolean({
        description:
          'four eyes: the member who made a held task cannot approve it (403 approval_self_decision); default false',
      }),
    ),
  },
  { additionalProperties: false },
)
const WebhookEvent = Type.String({ pattern: '^(\\*|[a-z][a-z0-9_]{0,40}(\\.[a-z][a-z0-9_]{0,40}){0,3})$' })
const fields = {
  approval: Approval,
  max_task_price_fils: Type.Union([SettingFils, Type.Null()]),
  output_ttl_s: Type.Integer({ minimum: 1, maximum: 31_536_000 }),
  webhook_events: Type.Array(WebhookEvent, {
    maxItems: 50,
    description: 'event types; "*" for all; repeats count once',
  }),
  default_language: Lang(),
}

/** An engagement's config: `max_task_price_fils` null for no limit, `webhook_events` `["*"]` for all. */
export const EngagementConfig = Type.Object(fields, { additionalProperties: false })
export type EngagementConfig = Static<typeof EngagementConfig>

/** A partial update: the fields given replace the current ones (`approval` as a whole). */
export const ConfigChange = Type.Object(
  {
    approval: Type.Optional(fields.approval),
    max_task_price_fils: Type.Optional(fields.max_task_price_fils),
    output_ttl_s: Type.Optional(fields.output_ttl_s),
    webhook_events: Type.Optional(fields.webhook_events),
    default_language: Type.Optional(fields.default_language),
  },
  { additionalProperties: false },
)
export type ConfigChange = Static<typeof ConfigChange>

export const ConfigView = Type.Object({
  ...fields,
  engagement_id: Type.String(),
  version: Type.Integer({ description: '0 while the defaults apply' }),
  updated_at: Type.Union([Type.String(), Type.Null()]),
})

type ConfigContext = Pick<RentalContext, 'db' | 'config' | 'now'>

/** The config of an engagement known to exist (any organization's: callers have checked it). */
export async function configOf(ctx: ConfigContext, db: RentalDb, engagementId: string) {
  return configFrom(ctx, await engagementWithConfig(db, engagementId))
}

/** The config an engagement read with its latest version has (the defaults while it has none). */
export function configFrom(
  ctx: Pick<ConfigContext, 'config'>,
  found: Awaited<ReturnType<typeof engagementWithConfig>>,
) {
  const latest = found?.latest
  if (latest)
    return { config: latest.config as EngagementConfig, version: latest.version, at: latest.created_at }
  const config: EngagementConfig = {
    approval: { mode: 'never' },
    max_task_price_fils: found ? Number(found.engagement.price_fils) : null,
    output_ttl_s: ctx.config.outputTtlS,
    webhook_events: ['*'],
    default_language: 'en',
  }
  return { config, version: 0, at: null as Date | null }
}

const view = (engagementId: string, current: Awaited<ReturnType<typeof configOf>>) => ({
  ...current.config,
  engagement_id: engagementId,
  version: current.version,
  updated_at: current.at?.toISOString() ?? null,
})

export async function configDetail(ctx: ConfigContext, orgId: string, engagementId: string) {
  if (!(await engagementOf(ctx.db, orgId, engagementId))) throw engagementNotFound(engagementId)
  return view(engagementId, await configOf(ctx, ctx.db, engagementId))
}

/**
 * Applies a partial change as a new version, in one transaction with the engagement locked:
 * only a pending or active engagement takes changes; `If-Match` names the version it changes.
 */
export async function changeConfig(
  ctx: ConfigContext,
  who: { orgId: string; subject: string; events: EventService; actor: Actor },
  engagementId: string,
  change: ConfigChange,
  ifMatch: number | undefined,
) {
  return inTransaction(ctx.db, async (trx) => {
    // another organization's engagement is 404 whatever the body says
    const engagement = await engagementOf(trx, who.orgId, engagementId, true)
    if (!engagement) throw engagementNotFound(engagementId)
    if (Object.keys(change).length === 0)
      throw rentalError('nothing_to_change', 'give at least one config field to change')
    if (change.approval) checkApproval(change.approval)
    const changes = change.webhook_events
      ? { ...change, webhook_events: [...new Set(change.webhook_events)] }
      : change
    const state: string = engagement.state
    if (state !== 'active' && state !== 'pending')
      throw rentalError('engagement_ended', `the engagement is ${state}: its config no longer changes`)
    const current = await configOf(ctx, trx, engagementId)
    if (ifMatch !== undefined && ifMatch !== current.version)
      throw rentalError(
        'precondition_failed',
        `If-Match names version ${ifMatch}; the config is at version ${current.version}`,
      )
    const config: EngagementConfig = { ...current.config, ...changes }
    const row = await insertConfigVersion(trx, {
      engagement_id: engagementId,
      version: current.version + 1,
      org_id: who.orgId,
      config: JSON.stringify(config),
      changes: JSON.stringify(changes),
      actor: who.subject,
      created_at: ctx.now(),
    })
    await engagementEvent(who.events, trx, who.orgId, engagementId, who.actor, 'engagement.config_changed', {
      version: row.version,
      changes,
    })
    return view(engagementId, { config, version: row.version, at: row.created_at })
  })
}

function checkApproval(approval: EngagementConfig['approval']) {
  if (approval.mode === 'above_price' && approval.above_fils === undefined)
    throw rentalError('invalid_config', 'approval.above_fils is required when approval.mode is above_price')
  if (approval.mode !== 'above_price' && approval.above_fils !== undefined)
    throw rentalError('invalid_config', 'approval.above_fils is only for approval.mode above_price')
}

/** 409 when the task's price exceeds the engagement's `max_task_price_fils`. */
export function checkTaskPrice(config: EngagementConfig, priceFils: number) {
  const max = config.max_task_price_fils
  if (max !== null && priceFils > max)
    throw rentalError(
      'task_price_over_limit',
      `the task costs ${priceFils} fils, above the engagement's max_task_price_fils ${max}`,
    )
}
