import { inTransaction as kitTransaction } from '@svc/kit'
import type { Kysely, Transaction } from 'kysely'
import type { KeysTables } from './areas/keys/store.ts'
import type { ClientsTables } from './areas/clients/store.ts'
import type { AccountsTables } from './areas/accounts/store.ts'
import type { EmailTables } from './areas/email/store.ts'
import type { IdentityTables } from './areas/identity/store.ts'
import type { WitnessTables } from './areas/witness/store.ts'
import type { DocumentsTables } from './areas/documents/store.ts'
import type { SessionsTables } from './areas/sessions/store.ts'
import type { AuthorizeTables } from './areas/authorize/store.ts'
import type { MfaTables } from './areas/mfa/store.ts'
import type { CredentialsTables } from './areas/credentials/store.ts'
import type { ParTables } from './areas/par/store.ts'
import type { DeviceTables } from './areas/device/store.ts'
import type { ResourcesTables } from './areas/resources/store.ts'
import type { PasskeysTables } from './areas/passkeys/store.ts'
import type { TokenTables } from './areas/token/store.ts'
import type { OrgsTables } from './areas/orgs/store.ts'
import type { LifecycleTables } from './areas/lifecycle/store.ts'
import type { ActivityTables } from './areas/activity/store.ts'
import type { SignalsTables } from './areas/signals/store.ts'
import type { ApprovalsTables } from './areas/approvals/store.ts'
import type { TasksTables } from './areas/tasks/store.ts'

/** Every table of the idp: each area declares its own in its store.ts. */
export type IdpTables = KeysTables &
  ClientsTables &
  AccountsTables &
  EmailTables &
  IdentityTables &
  WitnessTables &
  DocumentsTables &
  SessionsTables &
  AuthorizeTables &
  MfaTables &
  CredentialsTables &
  ParTables &
  DeviceTables &
  ResourcesTables &
  PasskeysTables &
  TokenTables &
  OrgsTables &
  LifecycleTables &
  ActivityTables &
  SignalsTables &
  ApprovalsTables &
  TasksTables

export type IdpDb = Kysely<IdpTables> | Transaction<IdpTables>

/**
 * Runs `work` in one transaction, then what `afterCommit` registered on it once it has committed (an
 * IdpDb may be either kind; a transaction inside one is refused by Kysely).
 */
export const inTransaction = <T>(db: IdpDb, work: (trx: IdpDb) => Promise<T>) =>
  kitTransaction<IdpTables, T>(db, work)
