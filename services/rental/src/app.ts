import { fileURLToPath } from 'node:url'
import cookie from '@fastify/cookie'
import { Jobs, Sealer, type ServiceSpec } from '@svc/kit'
import { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { Kysely } from 'kysely'
import { a2aRoutes } from './areas/a2a/routes.ts'
import { ConsoleSessions, CSRF_HEADER, SESSION_COOKIE } from './areas/auth/hooks.ts'
import { IdpLink } from './areas/auth/idp-link.ts'
import { authRoutes } from './areas/auth/routes.ts'
import { catalogueRoutes } from './areas/catalogue/routes.ts'
import { seedJobs, startSeeding } from './areas/catalogue/service.ts'
import { consoleRoutes } from './areas/console/routes.ts'
import { engagementRoutes } from './areas/engagements/routes.ts'
import { providerIdentity } from './areas/provider/identity.ts'
import { JournalRail } from './areas/rail/journal.ts'
import { LedgerReader } from './areas/record/ledger.ts'
import { recordRoutes } from './areas/record/routes.ts'
import { revocationRoutes } from './areas/revocation/routes.ts'
import { AgentCredentials } from './areas/tasks/agent-credentials.ts'
import { AgentDispatcher } from './areas/tasks/dispatch.ts'
import { taskRoutes } from './areas/tasks/routes.ts'
import { startTaskRunner } from './areas/tasks/service.ts'
import { publicRoutes } from './areas/public/routes.ts'
import { dependencyProbe } from './areas/public/status.ts'
import { tokenRoutes } from './areas/tokens/routes.ts'
import { type RentalConfig, readRentalConfig } from './config.ts'
import type { RentalTables } from './db.ts'

const VERSION = '0.16.1'

export const rental: ServiceSpec<RentalConfig> = {
  name: 'rental',
  // the version the rental API description carries (rental-service.md, Versioning)
  version: VERSION,
  description: 'The agent rental service: hire agents for jobs, sign SLAs and escrows, run tasks, pay once.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  errorShape: 'api',
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
    agtBearer: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'agt_',
      description: 'an API token from POST /api/tokens (the A2A surface)',
    },
  },
  readConfig: readRentalConfig,
  banner: (ctx) =>
    ctx.common.nodeEnv === 'production'
      ? []
      : [`console sign-in at ${ctx.baseUrl}/auth/login (the idp's demo account)`],
  async build(app, ctx) {
    const db = ctx.database!.db as Kysely<RentalTables>
    const sealer = new Sealer(ctx.config.encryptionKey)
    await app.register(cookie)
    app.decorateRequest('consoleSession', null)

    const link = new IdpLink({
      db,
      sealer,
      log: ctx.log,
      issuer: ctx.topology.idp.url,
      baseUrl: ctx.baseUrl,
      client: ctx.config.idpClient,
    })
    // sign-in needs the idp: not ready until the console's client is registered and the issuer discovered
    ctx.addReadinessCheck({ name: 'idp', check: async () => link.ready })
    link.start()

    let seeding: { stop(): void } | undefined
    if (ctx.config.seed) {
      await seedJobs(db)
      seeding = startSeeding(db, ctx.topology.agents.url, ctx.log)
    }
    app.addHook('onClose', async () => {
      link.stop()
      seeding?.stop()
    })

    const sessions = new ConsoleSessions(db, ctx.config.encryptionKey, {
      secureCookies: ctx.baseUrl.startsWith('https:'),
      ttlHours: ctx.config.sessionTtlHours,
    })
    authRoutes(app, { link, sessions, kv: ctx.kv, baseUrl: ctx.baseUrl })
    consoleRoutes(app, sessions, ctx.topology.ledger.url)
    catalogueRoutes(app, db, sessions)
    tokenRoutes(app, db, sessions, ctx.config.maxApiTokens)

    // money and tasks: the provider identity signs receipts (through the outbox), the rail moves money
    const jobs = await Jobs.start(ctx.database!, {
      onError: (err) => ctx.log.warn({ err: err.message }, 'jobs error'),
    })
    app.addHook('preClose', async () => jobs.stop())
    const provider = await providerIdentity(db, sealer)
    const receipts = new ReceiptWriter({
      db,
      jobs,
      ledgerUrl: ctx.topology.ledger.url,
      token: ctx.config.ledgerToken,
      issuer: provider,
    })
    await receipts.start()
    const money = {
      db,
      rail: new JournalRail(),
      receipts,
      provider,
      feeBps: ctx.config.feeBps,
      demoWalletFils: ctx.config.demoWalletFils,
      outputTtlS: ctx.config.outputTtlS,
      now: () => sessions.now(),
    }
    const tasks = {
      ...money,
      jobs,
      dispatcher: new AgentDispatcher(
        new AgentCredentials({ link, idpClient: ctx.config.idpClient, resource: ctx.topology.agents.url }),
      ),
      taskTimeoutMs: ctx.config.taskTimeoutMs,
      taskRetries: ctx.config.taskRetries,
      log: ctx.log,
    }
    const runner = await startTaskRunner(tasks)
    app.addHook('onClose', async () => runner.stop())
    engagementRoutes(app, money, sessions)
    taskRoutes(app, tasks, sessions)
    a2aRoutes(app, { ...tasks, baseUrl: ctx.baseUrl, version: VERSION })
    // the agents' record: receipts with proofs, CV, evidence packs, and the kill switch
    const record = { db, provider, ledger: new LedgerReader(ctx.topology.ledger.url), now: money.now }
    recordRoutes(app, record, sessions)
    revocationRoutes(app, { ...record, receipts }, sessions)
    publicRoutes(app, {
      db,
      version: VERSION,
      idpLinked: () => link.ready,
      dependencies: dependencyProbe({
        idp: ctx.topology.idp.url,
        ledger: ctx.topology.ledger.url,
        agents: ctx.topology.agents.url,
      }),
    })
  },
}
