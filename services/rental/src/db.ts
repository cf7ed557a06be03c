import { type IdempotencyTables, inTransaction as kitTransaction } from '@svc/kit'
import type { ColumnType, Kysely, Transaction } from 'kysely'
import type { ApprovalTables } from './areas/approvals/store.ts'
import type { AuthTables } from './areas/auth/store.ts'
import type { ConnectTables } from './areas/connect/store.ts'
import type { EgressTables } from './areas/egress/store.ts'
import type { BatchTables } from './areas/batches/store.ts'
import type { BudgetTables } from './areas/budgets/store.ts'
import type { MarketTables } from './areas/market/store.ts'
import type { FileTables } from './areas/files/store.ts'
import type { CatalogueTables } from './areas/catalogue/store.ts'
import type { EngagementTables } from './areas/engagements/store.ts'
import type { TermsTables } from './areas/engagements/terms-store.ts'
import type { AnchorTables } from './areas/events/anchor.ts'
import type { EventTables } from './areas/events/store.ts'
import type { InvoiceTables } from './areas/invoices/store.ts'
import type { OrgTables } from './areas/orgs/store.ts'
import type { OutboxTables } from './areas/outbox/store.ts'
import type { ProviderTables } from './areas/provider/store.ts'
import type { RefundTables } from './areas/refunds/store.ts'
import type { RatingTables } from './areas/ratings/store.ts'
import type { IncidentTables } from './areas/incidents/store.ts'
import type { RailTables } from './areas/rail/store.ts'
import type { ScheduleTables } from './areas/schedules/store.ts'
import type { TaskTables } from './areas/tasks/store.ts'
import type { TokenTables } from './areas/tokens/store.ts'
import type { TrialTables } from './areas/trials/store.ts'
import type { SlaTables } from './areas/sla/store.ts'
import type { WebhookTables } from './areas/webhooks/store.ts'
import type { DisputeTables } from './areas/disputes/store.ts'
import type { InsuranceTables } from './areas/insurance/store.ts'
import type { IdentityTables } from './areas/identity/store.ts'
import type { ErasureTables } from './areas/erasure/store.ts'
import type { RetentionTables } from './areas/retention/store.ts'
import type { OnboardingTables } from './areas/onboarding/store.ts'
import type { TenantTables } from './areas/tenant/store.ts'
import type { TeamTables } from './areas/teams/store.ts'
import type { ExportTables } from './areas/exports/store.ts'

/** A jsonb column: read as the value, written as its JSON text. */
export type Json = ColumnType<unknown, string, string>

/**
 * The rental's tables, as Kysely sees them: each area declares its own in its store.ts, and only
 * that store queries them. `idempotent_answers` is the kit's (idempotent writes).
 */
export type RentalTables = OrgTables &
  TenantTables &
  AuthTables &
  CatalogueTables &
  TokenTables &
  RailTables &
  ProviderTables &
  EngagementTables &
  TermsTables &
  TaskTables &
  ApprovalTables &
  ScheduleTables &
  EventTables &
  AnchorTables &
  BatchTables &
  BudgetTables &
  MarketTables &
  FileTables &
  OutboxTables &
  WebhookTables &
  InvoiceTables &
  RefundTables &
  DisputeTables &
  InsuranceTables &
  TrialTables &
  SlaTables &
  RatingTables &
  IncidentTables &
  IdentityTables &
  ErasureTables &
  RetentionTables &
  OnboardingTables &
  ConnectTables &
  EgressTables &
  TeamTables &
  ExportTables &
  IdempotencyTables

export type RentalDb = Kysely<RentalTables> | Transaction<RentalTables>

/** A transaction; what `afterCommit` registers on it (the receipt writer's wake-up) runs once it commits. */
export const inTransaction = <T>(db: RentalDb, work: (trx: RentalDb) => Promise<T>) =>
  kitTransaction<RentalTables, T>(db, work)
