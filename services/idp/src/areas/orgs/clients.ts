import { AppError, notFound, type Sealer } from '@svc/kit'
import type { Static } from 'typebox'
import { type IdpDb, inTransaction } from '../../db.ts'
import type { NewClient } from '../clients/schemas.ts'
import {
  checkClientUris,
  clientView,
  createClient,
  rotateClientSecret,
  rotateWebhookSecret,
} from '../clients/index.ts'
import { forgetClients } from '../clients/index.ts'
import type { ClientsService } from '../clients/index.ts'
import { checkCallerUrl } from '../../outbound.ts'
import { lockOrg, type OrgRow } from './store.ts'

/** Where an organization's clients are read and changed: the database, through the clients' service. */
export interface OrgClientDeps {
  db: IdpDb
  clients: ClientsService
}

type OrgClientInput = Omit<Static<typeof NewClient>, 'first_party' | 'subject_type'>

/** A new client of the organization, within its `max_clients` (429 beyond, counted under a row lock). */
export async function createOrgClient(
  deps: OrgClientDeps,
  sealer: Sealer,
  org: OrgRow,
  input: OrgClientInput,
  allowPrivate: boolean,
) {
  await checkClientUris(input, allowPrivate)
  return inTransaction(deps.db, async (trx) => {
    const locked = await lockOrg(trx, org.id)
    if ((await deps.clients.countLiveOf(trx, org.id)) >= locked.max_clients)
      throw new AppError(
        429,
        'quota_exceeded',
        `the organization has its ${locked.max_clients} clients: delete one or ask for a larger quota`,
      )
    return createClient(trx, sealer, input, org.id)
  })
}

export async function orgClients(deps: OrgClientDeps, org: OrgRow) {
  return (await deps.clients.ofOrganization(deps.db, org.id)).map(clientView)
}

/** One of the organization's clients; any other answers 404, never 403. */
export async function orgClient(deps: OrgClientDeps, org: OrgRow, clientId: string) {
  const row = await deps.clients.ofOrganizationById(deps.db, org.id, clientId)
  if (!row) throw notFound(`no client ${clientId} in this organization`, 'not_found')
  return clientView(row)
}

export async function deleteOrgClient(deps: OrgClientDeps, org: OrgRow, clientId: string) {
  if (!(await deps.clients.markDeleted(deps.db, org.id, clientId)))
    throw notFound(`no client ${clientId} in this organization`, 'not_found')
  forgetClients()
}

export async function rotateOrgClientSecret(deps: OrgClientDeps, org: OrgRow, clientId: string) {
  await orgClient(deps, org, clientId)
  return rotateClientSecret(deps.db, clientId)
}

export async function rotateOrgWebhookSecret(
  deps: OrgClientDeps,
  sealer: Sealer,
  org: OrgRow,
  clientId: string,
) {
  await orgClient(deps, org, clientId)
  return rotateWebhookSecret(deps.db, sealer, clientId)
}

/**
 * Sets where the client hears of its users' account events; the same URL becomes its back-channel
 * logout URI when it has none (identity-provider.md: the lifecycle URL also registers logout URIs).
 */
export async function setLifecycleUrl(
  deps: OrgClientDeps,
  org: OrgRow,
  clientId: string,
  url: string,
  allowPrivate: boolean,
) {
  const client = await orgClient(deps, org, clientId)
  await checkCallerUrl(url, 'lifecycle_webhook_url', { allowPrivate })
  await deps.clients.update(deps.db, clientId, {
    lifecycle_webhook_url: url,
    backchannel_logout_uri: client.backchannel_logout_uri ?? url,
  })
  forgetClients()
  return orgClient(deps, org, clientId)
}

/** The operator's declaration of the model behind its agent, shown as `agent` with `declared_by: operator`. */
export async function declareModel(
  deps: OrgClientDeps,
  org: OrgRow,
  clientId: string,
  model: { model: string; version?: string; provider?: string },
) {
  await orgClient(deps, org, clientId)
  await deps.clients.update(deps.db, clientId, { agent_model: JSON.stringify(model) as never })
  forgetClients()
  return orgClient(deps, org, clientId)
}
