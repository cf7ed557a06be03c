/**
 * Every event type the rental records (docs/rental/events.md): what a webhook may
 * subscribe to. An area that records a new type adds it here, so clients can subscribe to it.
 */
export const EVENT_TYPES = [
  // tasks
  'task.created',
  'task.state_changed',
  // a cancel and a retry are task.state_changed (to canceled; failed to submitted, retry: true)
  'task.trace',
  // the rental ended a task its agent held, and the agent's A2A CancelTask failed past its retries
  'task.agent_cancel_failed',
  // approvals
  'approval.requested',
  'approval.approved',
  'approval.rejected',
  'approval.expired',
  'approval.canceled',
  // connect: bindings and tool calls
  'connect.bound',
  'connect.revoked',
  'tool.called',
  'tool.refused',
  'tool.held',
  'tool.ended',
  // egress and web-tool policies
  'engagement.policy_changed',
  'egress.refused',
  // the web tool (an agent's page fetched through the rental)
  'web.fetched',
  'web.refused',
  'web.failed',
  // engagements and money
  'engagement.created',
  'engagement.activated',
  'engagement.ended',
  'engagement.config_changed',
  'engagement.capacity_changed',
  'engagement.version_accepted',
  'agent.version_released',
  'escrow.opened',
  'escrow.released',
  'escrow.returned',
  'budget.created',
  'budget.updated',
  'budget.deleted',
  'budget.threshold',
  'invoice.issued',
  'invoice.paid',
  'credit_note.issued',
  'refund.requested',
  'refund.accepted',
  'refund.settled',
  'refund.rejected',
  // the data room
  'file.stored',
  'file.deleted',
  'file.handed',
  // onboarding
  'onboarding.kyb_submitted',
  'onboarding.kyb_reviewed',
  'onboarding.kya_screened',
  // disputes and insurance
  'dispute.opened',
  'dispute.responded',
  'dispute.resolved',
  'dispute.withdrawn',
  'insurance.policy_started',
  'insurance.claim_paid',
  'insurance.claim_refused',
  // SLA (areas/sla records them; insurance claims read sla.breached)
  'sla.breached',
  'sla.restored',
  // teams
  'team.created',
  'team.hired',
  'team.hop',
  'team.ended',
  'sla.credited',
  // ratings, references and incidents
  'rating.created',
  'rating.edited',
  'reference.published',
  'reference.updated',
  'incident.reported',
  'incident.noted',
  'incident.resolved',
  // the market
  'listing.published',
  'listing.updated',
  'listing.availability_changed',
  'listing.card_changed',
  // trials
  'trial.started',
  'trial.task',
  'trial.converted',
  // schedules and batches
  'schedule.created',
  'schedule.fired',
  'schedule.paused',
  'schedule.resumed',
  'schedule.deleted',
  'schedule.failed',
  'batch.created',
  'batch.progressed',
  'batch.completed',
  // the organization
  'member.invited',
  'member.joined',
  'member.removed',
  'member.role_changed',
  // the idp's lifecycle events about a member (POST /webhooks/svc-id), and the member's language
  'member.identity_event',
  'member.locale_changed',
  // erasure (POST /api/clients/erase): the organization's personal data deleted
  'client.erased',
  // retention and legal holds
  'retention.policy_changed',
  'retention.hold_placed',
  'retention.hold_released',
  'retention.deleted',
  // the tenant API (/v1): a member's profile, custom roles, organization keys, the secrets vault
  'member.profile_changed',
  'role.saved',
  'role.deleted',
  'key.issued',
  'secret.saved',
  // the server-side tenant export (POST /v1/tenant/exports)
  'tenant.export_requested',
  'tenant.export_ready',
  'tenant.export_failed',
  'tenant.export_downloaded',
  // webhooks
  'webhook.created',
  'webhook.deleted',
  'webhook.test',
] as const
export type EventType = (typeof EVENT_TYPES)[number]
