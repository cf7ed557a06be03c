import type { Page } from '@svc/kit'
import type { ApprovalService } from '../approvals/index.ts'
import type { BudgetService } from '../budgets/index.ts'
import type { DisputeService } from '../disputes/index.ts'
import type { IncidentService } from '../incidents/index.ts'
import type { ScheduleService } from '../schedules/index.ts'
import type { RetentionService } from '../retention/index.ts'
import type { StatementService } from '../statements/index.ts'
import type { ConnectService } from '../connect/index.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { EventService } from '../events/index.ts'
import type { InvoiceService } from '../invoices/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { RefundService } from '../refunds/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { TenantService } from '../tenant/index.ts'
import type { TokenService } from '../tokens/index.ts'
import type { WebhookService } from '../webhooks/index.ts'

/** The services the export reads through: each section is its area's own answer, scoped to the organization. */
export interface SectionDeps {
  orgs: OrgService
  tokens: TokenService
  tenant: TenantService
  engagements: EngagementService
  tasks: TaskService
  approvals: ApprovalService
  events: EventService
  invoices: InvoiceService
  refunds: RefundService
  webhooks: WebhookService
  connect: ConnectService
  budgets: BudgetService
  disputes: DisputeService
  incidents: IncidentService
  schedules: ScheduleService
  statements: StatementService
  retention: RetentionService
  /** The service's clock (tests move it). */
  now: () => Date
}

const LIMIT = 100
/** At most this many pages of one section (100 000 rows): the archive is assembled in memory. */
const MAX_PAGES = 1000

const rowsOf = (answer: unknown): unknown[] =>
  (Object.values((answer ?? {}) as Record<string, unknown>).find(Array.isArray) as unknown[] | undefined) ??
  []

/** Every page of an offset-paged list. */
async function paged(read: (page: Page) => Promise<unknown>) {
  const rows: unknown[] = []
  for (let p = 0; p < MAX_PAGES; p++) {
    const got = rowsOf(await read({ limit: LIMIT, offset: p * LIMIT }))
    rows.push(...got)
    if (got.length < LIMIT) break
  }
  return rows
}

type Reader = (deps: SectionDeps, orgId: string) => Promise<unknown>

/**
 * What the archive holds, in order: the same sections the console's browser export gathered from
 * the API, each read through its area's service for this organization only. Secrets are names and
 * versions (never values), keys their metadata (never a plaintext), webhooks never their signing
 * secret: what the API answers is what the archive holds.
 */
export const SECTIONS: ReadonlyArray<readonly [string, Reader]> = [
  ['organization', async (d, org) => (await d.orgs.orgs([org]))[0] ?? null],
  ['members', (d, org) => paged((page) => d.orgs.members(org, page))],
  ['roles', (d, org) => d.orgs.roles(org)],
  ['organization_keys', (d, org) => d.tokens.orgKeys(org)],
  ['secrets', (d, org) => d.tenant.secrets(org)],
  ['engagements', (d, org) => paged((page) => d.engagements.list(org, page))],
  ['tasks', (d, org) => paged((page) => d.tasks.list(org, page))],
  [
    'executions',
    async (d, org) => {
      const rows: unknown[] = []
      let cursor: string | undefined
      for (let p = 0; p < MAX_PAGES; p++) {
        const page = await d.tasks.executions(org, {}, { limit: LIMIT, cursor }, [d.connect.executions])
        rows.push(...page.rows)
        if (!page.nextCursor) break
        cursor = page.nextCursor
      }
      return rows
    },
  ],
  ['approvals', (d, org) => paged((page) => d.approvals.pending(org, page))],
  [
    'audit',
    async (d, org) => {
      const rows: unknown[] = []
      let beforeSeq: number | undefined
      for (let p = 0; p < MAX_PAGES; p++) {
        const page = await d.events.audit(org, { limit: LIMIT, beforeSeq })
        rows.push(...page)
        if (page.length < LIMIT) break
        beforeSeq = page[page.length - 1]!.seq
      }
      return rows
    },
  ],
  ['invoices', (d, org) => paged((page) => d.invoices.list(org, page))],
  ['refunds', (d, org) => paged((page) => d.refunds.list(org, page))],
  ['budgets', (d, org) => paged((page) => d.budgets.list(org, page))],
  ['disputes', (d, org) => paged((page) => d.disputes.list(org, page))],
  ['incidents', (d, org) => paged((page) => d.incidents.list(org, page))],
  ['schedules', (d, org) => paged((page) => d.schedules.list(org, page))],
  ['webhooks', (d, org) => paged((page) => d.webhooks.list(org, page))],
  [
    'statement',
    async (d, org) => {
      // each engagement's lines from its start to now, as the engagement export reads them
      const to = new Date(d.now().getTime() + 1)
      const engagements = (await paged((page) => d.engagements.list(org, page))) as Array<{
        id: string
        created_at: string
      }>
      const statements = []
      for (const e of engagements)
        statements.push(
          await d.statements.ofEngagement(org, { id: e.id, created_at: new Date(e.created_at) }, to),
        )
      return statements
    },
  ],
  ['connections', (d, org) => d.connect.health(org)],
  ['retention', (d, org) => d.retention.view(org)],
]
