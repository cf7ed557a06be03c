import { createHmac } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Jobs, rateLimit, Sealer, type ServiceSpec } from '@svc/kit'
import { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { Kysely } from 'kysely'
import cookie from '@fastify/cookie'
import { requireAdmin } from './admin.ts'
import { Mailer } from './areas/email/mailer.ts'
import { DEMO_EMAIL, ensureDemoUser } from './areas/accounts/service.ts'
import { accountChangeRoutes } from './areas/accounts/change-routes.ts'
import { accountRoutes } from './areas/accounts/routes.ts'
import { lifecycleAdminRoutes } from './areas/lifecycle/routes.ts'
import { startLifecycleDelivery } from './areas/lifecycle/service.ts'
import { activityRoutes } from './areas/activity/routes.ts'
import { reconcileRoutes } from './areas/receipts/routes.ts'
import { signalRoutes } from './areas/signals/routes.ts'
import { userAdminRoutes } from './areas/users/routes.ts'
import { startSignalDelivery } from './areas/signals/service.ts'
import { approvalRoutes } from './areas/approvals/routes.ts'
import { startApprovalExpiry } from './areas/approvals/service.ts'
import { consentRoutes } from './areas/authorize/consent-routes.ts'
import { authorizeRoutes } from './areas/authorize/routes.ts'
import { discoveryRoutes } from './areas/discovery/routes.ts'
import { logoutRoutes } from './areas/logout/routes.ts'
import { mfaRoutes } from './areas/mfa/routes.ts'
import { passkeyRoutes } from './areas/passkeys/routes.ts'
import { announceLogout, startBackchannelDelivery } from './areas/logout/service.ts'
import { backfillUserKeys, issuerIdentity, issuerPqKey, issuerWitnessSeed } from './areas/identity/service.ts'
import { publishConstitution } from './areas/documents/constitution.ts'
import { documentRoutes } from './areas/documents/routes.ts'
import { retentionRoutes } from './areas/accounts/retention-routes.ts'
import { witnessRoutes } from './areas/witness/routes.ts'
import { witnessOf } from './areas/witness/service.ts'
import { evidenceRoutes } from './areas/evidence/routes.ts'
import { registryRoutes } from './areas/registry/routes.ts'
import { resourceRoutes } from './areas/resources/routes.ts'
import { parRoutes } from './areas/par/routes.ts'
import { deviceRoutes } from './areas/device/routes.ts'
import { credentialRoutes } from './areas/credentials/routes.ts'
import { revocationRoutes } from './areas/revocation/routes.ts'
import { taskRoutes } from './areas/tasks/routes.ts'
import { tokenRoutes } from './areas/token/routes.ts'
import { uiRoutes } from './areas/ui/routes.ts'
import { userinfoRoutes } from './areas/userinfo/routes.ts'
import { clientRoutes } from './areas/clients/routes.ts'
import { backfillClientKeys } from './areas/clients/service.ts'
import { orgAdminRoutes } from './areas/orgs/admin-routes.ts'
import { orgClientRoutes } from './areas/orgs/client-routes.ts'
import { registerRoutes } from './areas/orgs/register.ts'
import { memberRoutes } from './areas/orgs/member-routes.ts'
import { orgResourceRoutes } from './areas/orgs/resource-routes.ts'
import { orgRoutes } from './areas/orgs/routes.ts'
import { keyRoutes } from './areas/keys/routes.ts'
import { SigningKeys } from './areas/keys/service.ts'
import { type IdpConfig, readIdpConfig } from './config.ts'
import type { IdpTables } from './db.ts'
import { idpErrors } from './errors.ts'

const ROTATION_CHECK_MS = 3600_000

export const idp: ServiceSpec<IdpConfig> = {
  name: 'idp',
  version: '0.1.0',
  description:
    'OAuth 2.0 / OpenID Connect issuer with machine grants, delegation, organizations and trust documents.',
  migrations: fileURLToPath(new URL('../migrations', import.meta.url)),
  // every idp error body follows RFC 6749 §5.2 (identity-provider.md, Errors)
  errorShape: 'oauth',
  errorCodes: idpErrors.codes,
  // the idp's /healthz reports {status, db, redis} and answers 503 when one fails (identity-provider.md)
  healthz: 'components',
  securitySchemes: {
    organizationKey: { type: 'http', scheme: 'bearer', description: 'the organization API key, svc_org_…' },
  },
  readConfig: readIdpConfig,
  metricsGuard: (ctx) => (request) => requireAdmin(request, ctx.config.adminToken),
  banner: (ctx) => [
    ...(ctx.config.adminTokenGenerated
      ? [`development admin token (X-Admin-Token): ${ctx.config.adminToken}`]
      : []),
    ...(ctx.common.nodeEnv !== 'production'
      ? [`demo sign-in at ${ctx.baseUrl}/ui/login: ${DEMO_EMAIL} / ${ctx.config.demoPassword}`]
      : []),
  ],
  async build(app, ctx) {
    const db = ctx.database!.db as Kysely<IdpTables>
    const sealer = new Sealer(ctx.config.encryptionKey)
    const keys = new SigningKeys(db, sealer, {
      rotationDays: ctx.config.keyRotationDays,
      retentionHours: ctx.config.keyRetentionHours,
    })
    await keys.ensure()
    await keys.rotateIfDue()
    const rotation = setInterval(
      () => keys.rotateIfDue().catch((err) => ctx.log.error({ err }, 'scheduled key rotation failed')),
      ROTATION_CHECK_MS,
    )
    rotation.unref()
    app.addHook('onClose', async () => clearInterval(rotation))

    // discovery and JWKS: 240/min/IP by default (identity-provider.md, Limits), shared through Redis
    const discoveryLimit = rateLimit(
      ctx.kv,
      'discovery',
      { limit: ctx.config.discoveryRatePerMinute, windowMs: 60_000 },
      'slow_down',
    )
    keyRoutes(app, keys, ctx.config.adminToken, discoveryLimit)
    clientRoutes(app, db, sealer, ctx.config.adminToken)
    await backfillClientKeys(db, sealer)
    orgAdminRoutes(app, db, ctx.config.adminToken)
    orgClientRoutes(app, { db, sealer, issuer: ctx.baseUrl, allowPrivate: ctx.config.fetchAllowPrivate })
    registerRoutes(app, db, sealer)
    orgResourceRoutes(app, db)

    await app.register(cookie)
    await backfillUserKeys(db, sealer)
    if (ctx.common.nodeEnv !== 'production') await ensureDemoUser(db, sealer, ctx.config.demoPassword)
    const jobs = await Jobs.start(ctx.database!, {
      onError: (err) => ctx.log.warn({ err: err.message }, 'jobs error'),
    })
    app.addHook('preClose', async () => jobs.stop())
    const identity = await issuerIdentity(db, sealer)
    const receipts = new ReceiptWriter({
      db,
      jobs,
      ledgerUrl: ctx.topology.ledger.url,
      token: ctx.config.ledgerToken,
      issuer: identity,
    })
    await receipts.start()
    reconcileRoutes(app, receipts, ctx.config.adminToken)
    const documents = {
      issuer: ctx.baseUrl,
      identity,
      pq: await issuerPqKey(db, sealer),
      ledgerUrl: ctx.topology.ledger.url,
      sovereignty: ctx.config.sovereignty,
      constitution: await publishConstitution(db),
      build: ctx.config.build,
    }
    documentRoutes(app, db, documents)
    await witnessRoutes(
      app,
      {
        db,
        witness: witnessOf(ctx.baseUrl, await issuerWitnessSeed(db, sealer)),
        logs: ctx.config.witnessLogs,
        ...(ctx.config.witnessPinOnFirstUse ? { pinFrom: ctx.topology.ledger.url } : {}),
      },
      documents,
    )
    const screening = {
      db,
      receipts,
      ledger: { url: ctx.topology.ledger.url, token: ctx.config.ledgerToken },
    }
    registryRoutes(app, {
      db,
      issuer: ctx.baseUrl,
      screening,
      documents,
      kv: ctx.kv,
      ratePerMinute: ctx.config.registryRatePerMinute,
    })
    const kyb = {
      db,
      keys,
      issuer: ctx.baseUrl,
      allowPrivate: ctx.config.fetchAllowPrivate,
      ownerDocumentUrl: ctx.config.ownerDocumentUrl,
    }
    orgRoutes(app, {
      ...screening,
      kyb,
      sealer,
      kv: ctx.kv,
      signupRatePerMinute: ctx.config.registerRatePerMinute,
    })
    const mailer = new Mailer({
      jobs,
      sealer,
      smtpUrl: ctx.config.smtpUrl,
      from: ctx.config.mailFrom ?? `svc <no-reply@${new URL(ctx.baseUrl).hostname}>`,
    })
    await mailer.start()
    app.addHook('onClose', async () => mailer.close())
    const issuer = ctx.baseUrl
    const lifecycle = {
      db,
      jobs,
      sealer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      retryDelayS: ctx.config.lifecycleRetryDelayS,
    }
    await startLifecycleDelivery(lifecycle)
    const signals = {
      db,
      jobs,
      keys,
      issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      retryDelayS: ctx.config.lifecycleRetryDelayS,
    }
    await startSignalDelivery(signals)
    signalRoutes(app, { ...signals, kv: ctx.kv })
    userAdminRoutes(app, { db, signals, adminToken: ctx.config.adminToken })
    await activityRoutes(app, { db, sealer, pairwiseSalt: ctx.config.pairwiseSalt })
    lifecycleAdminRoutes(app, db, ctx.config.adminToken)
    const changes = { db, mailer, receipts, lifecycle, signals, issuer }
    retentionRoutes(app, { ...changes, adminToken: ctx.config.adminToken })
    const origin = new URL(issuer).origin
    const secureCookies = issuer.startsWith('https:')
    discoveryRoutes(app, issuer, discoveryLimit)
    resourceRoutes(app, { db, issuer, adminToken: ctx.config.adminToken, discoveryLimit })
    authorizeRoutes(app, db, issuer)
    // one nonce secret for every instance, derived from the sealing key (RFC 9449 §8 leaves its form to us)
    const dpop = {
      kv: ctx.kv,
      issuer,
      nonceKey: createHmac('sha256', ctx.config.encryptionKey).update('dpop-nonce').digest(),
    }
    parRoutes(app, { db, kv: ctx.kv, issuer, dpop })
    consentRoutes(app, { db, receipts, lifecycle, issuer, origin, secureCookies })
    taskRoutes(app, { db, origin })
    evidenceRoutes(app, db)
    memberRoutes(app, { db, mailer, issuer, pairwiseSalt: ctx.config.pairwiseSalt, origin, secureCookies })
    mfaRoutes(app, { db, receipts, kv: ctx.kv, sealer, origin, secureCookies })
    accountRoutes(app, {
      db,
      mailer,
      sealer,
      kv: ctx.kv,
      issuer,
      origin,
      secureCookies,
      development: ctx.common.nodeEnv !== 'production',
      ratePerMinute: ctx.config.registerRatePerMinute,
      changes,
    })
    accountChangeRoutes(app, { ...changes, origin, sealer })
    tokenRoutes(app, {
      dpop,
      screening,
      db,
      kv: ctx.kv,
      keys,
      issuer,
      pairwiseSalt: ctx.config.pairwiseSalt,
      ratePerMinute: ctx.config.tokenRatePerMinute,
      now: ctx.config.now,
    })
    userinfoRoutes(app, { db, kv: ctx.kv, keys, issuer, dpop })
    deviceRoutes(app, {
      db,
      kv: ctx.kv,
      issuer,
      receipts,
      origin,
      secureCookies,
      now: ctx.config.now,
      ratePerMinute: ctx.config.tokenRatePerMinute.ip,
      userCodesPerMinute: ctx.config.userCodeRatePerMinute,
    })
    revocationRoutes(app, { db, kv: ctx.kv, keys, issuer })
    credentialRoutes(app, {
      db,
      kv: ctx.kv,
      keys,
      issuer,
      dpop,
      identity,
      receipts,
      now: ctx.config.now,
      origin,
      discoveryLimit,
      nonceRatePerMinute: ctx.config.tokenRatePerMinute.ip,
    })
    const approvals = { db, jobs, receipts, issuer, intervalS: ctx.config.approvalIntervalS }
    await startApprovalExpiry(approvals)
    approvalRoutes(app, { ...approvals, kv: ctx.kv, keys, dpop, origin, secureCookies })
    const logout = { db, keys, issuer, pairwiseSalt: ctx.config.pairwiseSalt, log: ctx.log, jobs, signals }
    await startBackchannelDelivery(logout)
    logoutRoutes(app, logout)
    const rp = { db, kv: ctx.kv, rpId: new URL(issuer).hostname, origin }
    passkeyRoutes(app, { ...rp, receipts, secureCookies })
    uiRoutes(app, {
      rp,
      onSessionEnd: (session) => announceLogout(logout, session),
      db,
      receipts,
      kv: ctx.kv,
      origin,
      secureCookies,
    })
  },
}
