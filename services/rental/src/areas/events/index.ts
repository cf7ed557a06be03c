import { defineArea } from '../../context.ts'
import { startAnchoring } from './anchor.ts'
import { CHAIN_CONSUMER, EventLog } from './service.ts'

export type { Actor } from './actor.ts'
export { actorOfRequest, operatorActor, SYSTEM, tokenActor } from './actor.ts'
export type { Consumer, EventView, NewEvent } from './service.ts'
export type { EventType } from './types.ts'
export { EVENT_TYPES } from './types.ts'
export type EventService = EventLog

/**
 * One record of what happened: every state change is appended here in its own transaction
 * (`record(trx, …)`), numbered within its stream (a task's events), and read by the task event
 * streams, by durable consumers (outbound webhooks) and as the audit record.
 * Its audit chain's heads are published to the ledger (anchor.ts).
 * Tables: rental_events, rental_event_streams, rental_event_cursors, rental_audit_chains,
 * rental_audit_anchors, rental_audit_anchor_run.
 */
export const eventsArea = defineArea({
  name: 'events',
  async mount(app, ctx): Promise<EventService> {
    const log = new EventLog(ctx)
    log.startChain()
    app.addHook('preClose', async () => log.stop())
    await startAnchoring(ctx, () => log.drainOne(CHAIN_CONSUMER))
    return log
  },
})
