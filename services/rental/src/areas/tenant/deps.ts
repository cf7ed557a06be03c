import { type TSchema, Type } from 'typebox'
import type { Sealer } from '@svc/kit'
import type { RentalDb } from '../../db.ts'
import type { ApprovalService } from '../approvals/index.ts'
import type { ConnectService } from '../connect/index.ts'
import type { EngagementService } from '../engagements/index.ts'
import type { EventService } from '../events/index.ts'
import type { OnboardingService } from '../onboarding/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import type { OrgService } from '../orgs/index.ts'
import type { TaskService } from '../tasks/index.ts'
import type { TokenService } from '../tokens/index.ts'
import type { TenantAuth } from './auth.ts'

/** What the /v1 routes are given: the tenant area's own parts and the services they read through. */
export interface TenantDeps {
  db: RentalDb
  sealer: Sealer
  now: () => Date
  ledgerUrl: string
  /** The identity provider: its account pages change passwords and second factors. */
  idpUrl: string
  /** The rental's did:key: the issuer of its receipts (audit anchors read back from the ledger). */
  providerDid: string
  auth: TenantAuth
  events: EventService
  orgs: OrgService
  tokens: TokenService
  tasks: TaskService
  approvals: ApprovalService
  engagements: EngagementService
  connect: ConnectService
  onboarding: OnboardingService
  outbox: OutboxService
}

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/** A date-time in the querystring (a period's bounds). */
export const DateTime = Type.String({ format: 'date-time', maxLength: 40 })

/** A validated date-time of the querystring as a Date (the format check lets through none that is invalid). */
export const dateOf = (value: string | undefined) => (value === undefined ? undefined : new Date(value))
