import { fileURLToPath } from 'node:url'
import cookie from '@fastify/cookie'
import { Jobs, Reactions, Sealer, type ServiceSpec } from '@svc/kit'
import { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { Kysely } from 'kysely'
import { a2aArea } from './areas/a2a/index.ts'
import { approvalsArea } from './areas/approvals/index.ts'
import { auditArea } from './areas/audit/index.ts'
import { authArea, ConsoleSessions, SESSION_COOKIE } from './areas/auth/index.ts'
import { CSRF_HEADER } from './http/index.ts'
import { batchesArea } from './areas/batches/index.ts'
import { catalogueArea } from './areas/catalogue/index.ts'
import { connectArea } from './areas/connect/index.ts'
import { egressArea } from './areas/egress/index.ts'
import { consoleArea } from './areas/console/index.ts'
import { engagementsArea } from './areas/engagements/index.ts'
import { eventsArea } from './areas/events/index.ts'
import { identityArea } from './areas/identity/index.ts'
import { orgsArea } from './areas/orgs/index.ts'
import { outboxArea } from './areas/outbox/index.ts'
import { providerIdentity } from './areas/provider/index.ts'
import { publicArea } from './areas/public/index.ts'
import { invoicesArea } from './areas/invoices/index.ts'
import { refundsArea } from './areas/refunds/index.ts'
import { endingArea } from './areas/ending/index.ts'
import { erasureArea } from './areas/erasure/index.ts'
import { ratingsArea } from './areas/ratings/index.ts'
import { retentionArea } from './areas/retention/index.ts'
import { incidentsArea } from './areas/incidents/index.ts'
import { JournalRail } from './areas/rail/index.ts'
import { recordArea } from './areas/record/index.ts'
import { releasesArea } from './areas/releases/index.ts'
import { revocationArea } from './areas/revocation/index.ts'
import { schedulesArea } from './areas/schedules/index.ts'
import { slaArea } from './areas/sla/index.ts'
import { budgetsArea } from './areas/budgets/index.ts'
import { marketArea } from './areas/market/index.ts'
import { modelsArea } from './areas/models/index.ts'
import { onboardingArea } from './areas/onboarding/index.ts'
import { filesArea } from './areas/files/index.ts'
import { statementsArea } from './areas/statements/index.ts'
import { tasksArea } from './areas/tasks/index.ts'
import { tenantArea } from './areas/tenant/index.ts'
import { tokensArea } from './areas/tokens/index.ts'
import { trialsArea } from './areas/trials/index.ts'
import { walletArea } from './areas/wallet/index.ts'
import { webhooksArea } from './areas/webhooks/index.ts'
import { webConsoleArea } from './areas/webconsole/index.ts'
import { disputesArea } from './areas/disputes/index.ts'
import { insuranceArea } from './areas/insurance/index.ts'
import { teamsArea } from './areas/teams/index.ts'
import { exportsArea } from './areas/exports/index.ts'
import { type RentalConfig, readRentalConfig } from './config.ts'
import { mountAreas, type RentalContext } from './context.ts'
import type { RentalTables } from './db.ts'
import { rentalErrors } from './errors.ts'
import type { RentalReactionTypes } from './reactions.ts'

const VERSION = '0.16.1'

export const rental: ServiceSpec<RentalConfig> = {
  name: 'rental',
  // the version the rental API description carries (rental-service.md, Versioning)
  version: VERSION,
  description: 'The agent rental service: hire agents for jobs, sign SLAs and escrows, run tasks, pay once.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  errorShape: 'api',
  errorCodes: rentalErrors.codes,
  securitySchemes: {
    consoleSession: {
      type: 'apiKey',
      in: 'cookie',
      name: SESSION_COOKIE,
      description: 'the console session, set by GET /auth/callback',
    },
    csrfToken: {
      type: 'apiKey',
      in: 'header',
      name: CSRF_HEADER,
      description: 'the session’s CSRF token from GET /api/me (S+C routes)',
    },
    idpAccessToken: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description:
        'the idp’s access token (RFC 9068) for this service (`resource` = its base URL), e.g. from the `svc-cli` client’s device grant: any signed-in route, no CSRF token',
    },
    idpDpopToken: {
      type: 'http',
      scheme: 'dpop',
      description:
        'the idp’s access token bound to a DPoP key (`cnf.jkt`), with its proof in the DPoP header (RFC 9449): any signed-in route, no CSRF token',
    },
    teamHopBearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'hop_',
      description: 'a team task hop’s delegation credential (`svc_team_token` of the agent’s A2A message)',
    },
    agtBearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'agt_',
      description: 'an API token from POST /api/tokens (the A2A surface)',
    },
    taskToolToken: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'tct_',
      description: 'a running task’s tool-call credential (svc_connect_token in the message its agent gets)',
    },
    organizationKey: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'ork_',
      description:
        'an organization key from POST /v1/auth/keys (/v1 routes within its scopes, and the A2A surface)',
    },
  },
  readConfig: readRentalConfig,
  banner: (ctx) =>
    ctx.common.nodeEnv === 'production'
      ? []
      : [`console sign-in at ${ctx.baseUrl}/auth/login (the idp's demo account)`],
  async build(app, service) {
    const db = service.database!.db as Kysely<RentalTables>
    const sealer = new Sealer(service.config.encryptionKey)
    await app.register(cookie)
    app.decorateRequest('consoleSession', null)
    const sessions = new ConsoleSessions(db, service.config.encryptionKey, {
      secureCookies: service.baseUrl.startsWith('https:'),
      ttlHours: service.config.sessionTtlHours,
      stepUp: service.config.stepUp,
      ...(service.config.now ? { now: service.config.now } : {}),
    })
    const jobs = await Jobs.start(service.database!, {
      maintenanceIntervalSeconds: service.common.jobsMaintenanceS,
      onError: (err) => service.log.warn({ err: err.message }, 'jobs error'),
      metrics: app.metrics,
    })
    // the receipt writer's sweep and deliveries end first (a failed delivery enqueues its retry job)
    let stopReceipts = async () => {}
    app.addHook('preClose', async () => {
      await stopReceipts()
      await jobs.stop()
    })
    // the provider identity signs receipts (through the outbox), the rail moves money
    const provider = await providerIdentity(db, sealer)
    const receipts = new ReceiptWriter({
      db,
      jobs,
      ledgerUrl: service.topology.ledger.url,
      token: service.config.ledgerToken,
      issuer: provider,
    })
    await receipts.start({
      onError: (err) => service.log.warn({ err: err.message }, 'receipt sweep failed'),
      metrics: app.metrics,
    })
    stopReceipts = () => receipts.stop()
    const ctx: RentalContext = {
      db,
      kv: service.kv,
      jobs,
      receipts,
      rail: new JournalRail(),
      sealer,
      sessions,
      provider,
      now: () => sessions.now(),
      config: service.config,
      log: service.log,
      topology: service.topology,
      baseUrl: service.baseUrl,
      version: VERSION,
      addReadinessCheck: service.addReadinessCheck,
      reactions: new Reactions<RentalReactionTypes>(),
    }
    // routes are registered in this order (the API document's); services in the order areas need them
    await mountAreas(app, ctx, [
      authArea,
      consoleArea,
      orgsArea,
      eventsArea,
      auditArea,
      catalogueArea,
      tokensArea,
      outboxArea,
      engagementsArea,
      releasesArea,
      invoicesArea,
      refundsArea,
      tasksArea,
      batchesArea,
      statementsArea,
      walletArea,
      approvalsArea,
      schedulesArea,
      budgetsArea,
      marketArea,
      modelsArea,
      filesArea,
      retentionArea,
      trialsArea,
      onboardingArea,
      identityArea,
      slaArea,
      a2aArea,
      recordArea,
      revocationArea,
      ratingsArea,
      incidentsArea,
      webhooksArea,
      publicArea,
      webConsoleArea,
      disputesArea,
      egressArea,
      connectArea,
      insuranceArea,
      endingArea,
      erasureArea,
      tenantArea,
      teamsArea,
      exportsArea,
    ])
  },
}
