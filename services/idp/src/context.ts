import type { Jobs, Kv, Sealer } from '@svc/kit'
import type { rateLimit } from '@svc/kit'
import { areaKit } from '@svc/kit'
import type { Logger } from 'pino'
import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { Identity } from './areas/identity/service.ts'
import type { DocumentDeps } from './areas/documents/service.ts'
import type { SigningKeys } from './areas/keys/service.ts'
import type { Mailer } from './areas/email/mailer.ts'
import type { SignalDeps } from './areas/signals/service.ts'
import type { LogoutService } from './areas/logout/index.ts'
import type { SessionsService } from './areas/sessions/index.ts'
import type { IdpConfig } from './config.ts'
import type { IdpTables } from './db.ts'
import type { Kysely } from 'kysely'
import type { DpopDeps } from './oauth/dpop.ts'
import type { IdpReactions } from './reactions.ts'
import type { AuthorizeService } from './areas/authorize/index.ts'
import type { ActivityService } from './areas/activity/index.ts'
import type { AccountChangesService } from './areas/account-changes/index.ts'
import type { AccountsService } from './areas/accounts/index.ts'
import type { ClientsService } from './areas/clients/index.ts'
import type { CredentialsService } from './areas/credentials/index.ts'
import type { DeviceService } from './areas/device/index.ts'
import type { MfaService } from './areas/mfa/index.ts'
import type { OrgsService } from './areas/orgs/index.ts'
import type { ParService } from './areas/par/index.ts'
import type { PasskeysService } from './areas/passkeys/index.ts'
import type { ResourcesService } from './areas/resources/index.ts'
import type { TasksService } from './areas/tasks/index.ts'
import type { TokenService } from './areas/token/index.ts'
import type { Lifecycle } from './areas/lifecycle/index.ts'

/** What every idp area is mounted with: one typed context, the same for all. */
export interface IdpContext {
  db: Kysely<IdpTables>
  kv: Kv
  jobs: Jobs
  sealer: Sealer
  config: IdpConfig
  log: Logger
  /** The issuer identifier: this service's public base URL. */
  issuer: string
  origin: string
  secureCookies: boolean
  development: boolean
  ledger: { url: string; token: string }
  /** Discovery, JWKS and metadata: 240/min/IP by default (identity-provider.md, Limits). */
  discoveryLimit: ReturnType<typeof rateLimit>
  dpop: DpopDeps
  /** Events told in a transaction, and the areas' reactions to them (reactions.ts). */
  reactions: IdpReactions
}

/** What each area offers the others (`undefined`: nothing). */
export interface IdpServices {
  identity: { ledger: Identity; pq: DocumentDeps['pq']; witnessSeed: Uint8Array }
  keys: SigningKeys
  receipts: ReceiptWriter
  documents: DocumentDeps
  email: Mailer
  lifecycle: Lifecycle
  signals: SignalDeps
  orgs: OrgsService
  logout: LogoutService
  sessions: SessionsService
  accounts: AccountsService
  'account-changes': AccountChangesService
  activity: ActivityService
  approvals: undefined
  authorize: AuthorizeService
  clients: ClientsService
  credentials: CredentialsService
  device: DeviceService
  discovery: undefined
  evidence: undefined
  mfa: MfaService
  par: ParService
  passkeys: PasskeysService
  registry: undefined
  resources: ResourcesService
  revocation: undefined
  tasks: TasksService
  token: TokenService
  ui: undefined
  userinfo: undefined
  users: undefined
  witness: undefined
}

export const { defineArea, mountAreas } = areaKit<IdpContext, IdpServices>()
