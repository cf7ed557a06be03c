import type { IdpDb } from '../../db.ts'
import type { ClientsService } from '../clients/index.ts'
import { signed, type DocumentDeps } from '../documents/index.ts'
import { ledgerHistory, type OrgsService } from '../orgs/index.ts'
import { idpError } from '../../errors.ts'

export interface RegistryDeps {
  db: IdpDb
  issuer: string
  clients: ClientsService
  orgs: OrgsService
  documents: DocumentDeps
}

/** The registered agent (a client) behind a DID, with its organization; 404 for any other DID. */
async function agentOf(deps: RegistryDeps, did: string) {
  const client = await deps.clients.liveByDid(deps.db, did)
  if (!client) throw idpError('not_found', `no agent ${did} is registered here`)
  const org = client.organization_id ? await deps.orgs.byId(deps.db, client.organization_id) : undefined
  return { client, org }
}

/**
 * The agent's public profile: what is registered about it (client, organization, verified domain,
 * workload binding, the operator's model declaration) beside its history on the ledger. An
 * unreachable ledger is said (`ledger.reachable: false`), never an error.
 */
export async function agentProfile(deps: RegistryDeps, did: string) {
  const { client, org } = await agentOf(deps, did)
  const { history, history_error } = await ledgerHistory(deps.orgs.screening, did)
  const types: Record<string, number> = {}
  for (const h of history) types[h.type] = (types[h.type] ?? 0) + 1
  const domainVerified = Boolean(org?.domain && org.domain_verified)
  return {
    did,
    name: client.client_name,
    registered_at: client.created_at.toISOString(),
    client: { client_id: client.client_id, first_party: client.first_party },
    organization: org
      ? { id: org.id, name: org.name, did: org.did, domain: org.domain, domain_verified: org.domain_verified }
      : null,
    workload: client.workload,
    agent: client.agent_model ? { ...client.agent_model, declared_by: 'operator' } : null,
    ledger: history_error
      ? { reachable: false, error: history_error }
      : {
          reachable: true,
          receipts: history.length,
          first_seen: history[0]?.issued_at ?? null,
          last_seen: history.at(-1)?.issued_at ?? null,
          types,
        },
    trust: {
      registered: true,
      organization: Boolean(org),
      domain_verified: domainVerified,
      workload_bound: client.workload !== null,
      model_declared: client.agent_model !== null,
      ledger_receipts: history_error ? null : history.length,
    },
  }
}

/** Where the agent's A2A card is: the well-known path (A2A §5.3) at the origin of its first redirect URI. */
const cardUrl = (redirectUris: string[]) => `${new URL(redirectUris[0]!).origin}/.well-known/agent-card.json`

/** A plain avatar, so the registration file's `image` always resolves. */
const avatar = (name: string) =>
  `data:image/svg+xml;base64,${Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="#345"/><text x="32" y="41" font-size="28" text-anchor="middle" fill="#fff" font-family="sans-serif">${
      name
        .trim()[0]
        ?.toUpperCase()
        .replace(/[<&>"]/g, '') ?? '?'
    }</text></svg>`,
  ).toString('base64')}`

/**
 * The ERC-8004 registration file: no `registrations` unless the agent is really registered on a
 * chain (none here), and `reputation` as the trust it supports (its receipts on the ledger).
 */
export async function erc8004(deps: RegistryDeps, did: string) {
  const { client, org } = await agentOf(deps, did)
  return {
    type: 'https://eips.ethereum.org/EIPS/eip-8004#registration-v1',
    name: client.client_name,
    description: `${client.client_name}, an agent${org ? ` of ${org.name}` : ''} registered with ${deps.issuer}`,
    image: avatar(client.client_name),
    services: [
      { name: 'A2A', endpoint: cardUrl(client.redirect_uris), version: '1.0' },
      { name: 'DID', endpoint: did },
    ],
    active: !org?.disabled_at,
    registrations: [],
    supportedTrust: ['reputation'],
  }
}

/** The AgentCV: the profile's facts, signed by the issuer (eddsa-jcs-2022), so anyone can check them offline. */
export async function agentCv(deps: RegistryDeps, did: string) {
  const profile = await agentProfile(deps, did)
  return signed(deps.documents, {
    type: 'AgentCV',
    issuer: deps.issuer,
    issued_at: new Date().toISOString(),
    subject: did,
    name: profile.name,
    registered_at: profile.registered_at,
    organization: profile.organization,
    workload: profile.workload,
    agent: profile.agent,
    ledger: profile.ledger,
    trust: profile.trust,
  })
}
