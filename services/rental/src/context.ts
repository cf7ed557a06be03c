import type { Endpoint, HealthCheck, Jobs, Kv, Sealer, ServiceName } from '@svc/kit'
import { areaKit } from '@svc/kit'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { Kysely } from 'kysely'
import type { Logger } from 'pino'
import type { ApprovalService } from './areas/approvals/index.ts'
import type { AuthService } from './areas/auth/index.ts'
import type { ConnectService } from './areas/connect/index.ts'
import type { EgressService } from './areas/egress/index.ts'
import type { ModelService } from './areas/models/index.ts'
import type { RecordService } from './areas/record/index.ts'
import type { ConsoleSessions } from './areas/auth/hooks.ts'
import type { DisputeService } from './areas/disputes/index.ts'
import type { BatchService } from './areas/batches/index.ts'
import type { BudgetService } from './areas/budgets/index.ts'
import type { MarketService } from './areas/market/index.ts'
import type { FileService } from './areas/files/index.ts'
import type { RetentionService } from './areas/retention/index.ts'
import type { OnboardingService } from './areas/onboarding/index.ts'
import type { RatingService } from './areas/ratings/index.ts'
import type { IncidentService } from './areas/incidents/index.ts'
import type { CatalogueService } from './areas/catalogue/index.ts'
import type { EngagementService } from './areas/engagements/index.ts'
import type { EventService } from './areas/events/index.ts'
import type { InvoiceService } from './areas/invoices/index.ts'
import type { OrgService } from './areas/orgs/index.ts'
import type { OutboxService } from './areas/outbox/index.ts'
import type { ProviderIdentity } from './areas/provider/index.ts'
import type { PaymentRail } from './areas/rail/index.ts'
import type { RefundService } from './areas/refunds/index.ts'
import type { RevocationService } from './areas/revocation/index.ts'
import type { ScheduleService } from './areas/schedules/index.ts'
import type { SlaService } from './areas/sla/index.ts'
import type { TaskService } from './areas/tasks/index.ts'
import type { TenantService } from './areas/tenant/index.ts'
import type { TokenService } from './areas/tokens/index.ts'
import type { StatementService } from './areas/statements/index.ts'
import type { WebhookService } from './areas/webhooks/index.ts'
import type { EndingService } from './areas/ending/index.ts'
import type { ErasureService } from './areas/erasure/index.ts'
import type { ExportService } from './areas/exports/index.ts'
import type { RentalConfig } from './config.ts'
import type { RentalTables } from './db.ts'
import type { RentalReactions } from './reactions.ts'

/** What every area of the rental is given: the service's parts, made once in app.ts. */
export interface RentalContext {
  db: Kysely<RentalTables>
  kv: Kv
  jobs: Jobs
  /** Receipts signed by the provider identity, written to the outbox in the caller's transaction. */
  receipts: ReceiptWriter
  rail: PaymentRail
  sealer: Sealer
  /** Console sessions: the `onRequest` hooks of S and S+C routes. */
  sessions: ConsoleSessions
  /** The rental's own did:key (offer packages, receipts, signed CVs). */
  provider: ProviderIdentity
  /** The clock: every area reads the time here (tests move it). */
  now: () => Date
  config: RentalConfig
  log: Logger
  topology: Record<ServiceName, Endpoint>
  baseUrl: string
  version: string
  addReadinessCheck(check: HealthCheck): void
  /** What areas do for the areas they need, which cannot need them back (reactions.ts). */
  reactions: RentalReactions
}

/** Each area's service: the only thing other areas may call (`undefined`: it offers nothing). */
export interface RentalServices {
  orgs: OrgService
  events: EventService
  audit: undefined
  auth: AuthService
  console: undefined
  catalogue: CatalogueService
  tokens: TokenService
  outbox: OutboxService
  budgets: BudgetService
  market: MarketService
  files: FileService
  engagements: EngagementService
  releases: undefined
  tasks: TaskService
  batches: BatchService
  approvals: ApprovalService
  connect: ConnectService
  egress: EgressService
  models: ModelService
  tenant: TenantService
  schedules: ScheduleService
  a2a: undefined
  record: RecordService
  revocation: RevocationService
  webhooks: WebhookService
  invoices: InvoiceService
  refunds: RefundService
  public: undefined
  statements: StatementService
  webconsole: undefined
  disputes: DisputeService
  insurance: undefined
  trials: undefined
  sla: SlaService
  ratings: RatingService
  incidents: IncidentService
  ending: EndingService
  erasure: ErasureService
  identity: undefined
  retention: RetentionService
  onboarding: OnboardingService
  teams: undefined
  exports: ExportService
  wallet: undefined
}

export const { defineArea, mountAreas } = areaKit<RentalContext, RentalServices>()
