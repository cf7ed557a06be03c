import { createHmac } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import cookie from '@fastify/cookie'
import { Jobs, Reactions, rateLimit, Sealer, type ServiceSpec } from '@svc/kit'
import type { Kysely } from 'kysely'
import { requireAdmin } from './admin.ts'
import { DEMO_EMAIL } from './areas/accounts/index.ts'
import { keysArea } from './areas/keys/index.ts'
import { clientsArea } from './areas/clients/index.ts'
import { identityArea } from './areas/identity/index.ts'
import { receiptsArea } from './areas/receipts/index.ts'
import { documentsArea } from './areas/documents/index.ts'
import { witnessArea } from './areas/witness/index.ts'
import { emailArea } from './areas/email/index.ts'
import { orgsArea } from './areas/orgs/index.ts'
import { registryArea } from './areas/registry/index.ts'
import { lifecycleArea } from './areas/lifecycle/index.ts'
import { signalsArea } from './areas/signals/index.ts'
import { usersArea } from './areas/users/index.ts'
import { activityArea } from './areas/activity/index.ts'
import { accountsArea } from './areas/accounts/index.ts'
import { sessionsArea } from './areas/sessions/index.ts'
import { accountChangesArea } from './areas/account-changes/index.ts'
import { discoveryArea } from './areas/discovery/index.ts'
import { resourcesArea } from './areas/resources/index.ts'
import { authorizeArea } from './areas/authorize/index.ts'
import { parArea } from './areas/par/index.ts'
import { tasksArea } from './areas/tasks/index.ts'
import { evidenceArea } from './areas/evidence/index.ts'
import { mfaArea } from './areas/mfa/index.ts'
import { tokenArea } from './areas/token/index.ts'
import { userinfoArea } from './areas/userinfo/index.ts'
import { deviceArea } from './areas/device/index.ts'
import { revocationArea } from './areas/revocation/index.ts'
import { credentialsArea } from './areas/credentials/index.ts'
import { approvalsArea } from './areas/approvals/index.ts'
import { logoutArea } from './areas/logout/index.ts'
import { passkeysArea } from './areas/passkeys/index.ts'
import { uiArea } from './areas/ui/index.ts'
import { type IdpConfig, readIdpConfig } from './config.ts'
import { type IdpContext, mountAreas } from './context.ts'
import type { IdpTables } from './db.ts'
import { idpErrors } from './errors.ts'
import type { IdpReactionTypes } from './reactions.ts'

/** The idp's areas; each is mounted after the areas it needs (context.ts lists what each offers). */
export const idpAreas = [
  keysArea,
  clientsArea,
  identityArea,
  receiptsArea,
  documentsArea,
  witnessArea,
  emailArea,
  orgsArea,
  registryArea,
  lifecycleArea,
  signalsArea,
  usersArea,
  activityArea,
  sessionsArea,
  accountsArea,
  accountChangesArea,
  discoveryArea,
  resourcesArea,
  authorizeArea,
  parArea,
  tasksArea,
  evidenceArea,
  mfaArea,
  tokenArea,
  userinfoArea,
  deviceArea,
  revocationArea,
  credentialsArea,
  approvalsArea,
  logoutArea,
  passkeysArea,
  uiArea,
]

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
  home: (ctx) => [
    { rel: 'discovery', title: 'OpenID Connect discovery', href: '/.well-known/openid-configuration' },
    { rel: 'sign_in', title: 'Sign in', href: '/ui/login' },
    { rel: 'account', title: 'Your account', href: '/ui/account' },
    { rel: 'register', title: 'Create an account', href: '/ui/register' },
    { rel: 'console', title: 'The rental’s console', href: `${ctx.topology.rental.url}/console` },
  ],
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
    const jobs = await Jobs.start(ctx.database!, {
      maintenanceIntervalSeconds: ctx.common.jobsMaintenanceS,
      onError: (err) => ctx.log.warn({ err: err.message }, 'jobs error'),
      metrics: app.metrics,
    })
    app.addHook('preClose', async () => jobs.stop())
    await app.register(cookie)
    const issuer = ctx.baseUrl
    const context: IdpContext = {
      db: ctx.database!.db as Kysely<IdpTables>,
      kv: ctx.kv,
      jobs,
      sealer: new Sealer(ctx.config.encryptionKey),
      config: ctx.config,
      log: ctx.log,
      issuer,
      origin: new URL(issuer).origin,
      secureCookies: issuer.startsWith('https:'),
      development: ctx.common.nodeEnv !== 'production',
      ledger: { url: ctx.topology.ledger.url, token: ctx.config.ledgerToken },
      // discovery and JWKS: 240/min/IP by default (identity-provider.md, Limits), shared through Redis
      discoveryLimit: rateLimit(
        ctx.kv,
        'discovery',
        { limit: ctx.config.discoveryRatePerMinute, windowMs: 60_000 },
        'slow_down',
      ),
      // one nonce secret for every instance, derived from the sealing key (RFC 9449 §8 leaves its form to us)
      reactions: new Reactions<IdpReactionTypes>(),
      dpop: {
        kv: ctx.kv,
        issuer,
        nonceKey: createHmac('sha256', ctx.config.encryptionKey).update('dpop-nonce').digest(),
      },
    }
    await mountAreas(app, context, idpAreas)
  },
}
