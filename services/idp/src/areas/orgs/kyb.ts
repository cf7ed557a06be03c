import type { IdpDb } from '../../db.ts'
import { fetchPublic } from '../../outbound.ts'
import type { SigningKeys } from '../keys/service.ts'
import { type OrgRow, updateOrg } from './store.ts'

export const ATTESTATION_TYP = 'svc-kyb+jwt'

export interface BusinessDeclaration {
  domain: string
  entity_name: string
  jurisdiction?: string
  registration?: string
}

export interface KybDeps {
  db: IdpDb
  keys: SigningKeys
  issuer: string
  allowPrivate: boolean
  /** Where a domain publishes its owner document (`{domain}` replaced). */
  ownerDocumentUrl: string
}

const documentUrl = (deps: KybDeps, domain: string) => deps.ownerDocumentUrl.replace('{domain}', domain)

/**
 * The organization declares its business and domain; the idp attests the declaration (a JWT
 * signed with its token keys, `sub` the organization's DID) and answers the owner document the
 * domain must publish. The domain is unverified until the check finds that document.
 */
export async function declareBusiness(deps: KybDeps, org: OrgRow, input: BusinessDeclaration) {
  const domain = input.domain.toLowerCase()
  const business = {
    entity_name: input.entity_name,
    ...(input.jurisdiction ? { jurisdiction: input.jurisdiction } : {}),
    ...(input.registration ? { registration: input.registration } : {}),
  }
  await updateOrg(deps.db, org.id, {
    domain,
    domain_verified: false,
    business: JSON.stringify(business) as never,
  })
  const attestation = await deps.keys.sign(
    {
      iss: deps.issuer,
      sub: org.did,
      iat: Math.floor(Date.now() / 1000),
      organization_id: org.id,
      domain,
      ...business,
    },
    'RS256',
    ATTESTATION_TYP,
  )
  return {
    attestation,
    publish_at: documentUrl(deps, domain),
    owner_document: { organization_id: org.id, did: org.did, issuer: deps.issuer, domain, attestation },
  }
}

/**
 * Checks both ways: the domain's owner document names this organization (its DID and id) and
 * carries our attestation of it for that domain, and the organization names that domain. Only
 * then is the domain verified; otherwise the problems are listed and it stays unverified.
 */
export async function checkDomain(deps: KybDeps, org: OrgRow) {
  if (!org.domain)
    return { verified: false, problems: ['declare the business and domain first (POST /orgs/kyb)'] }
  const problems: string[] = []
  let document: Record<string, unknown> = {}
  try {
    document = ((await fetchPublic(documentUrl(deps, org.domain), { allowPrivate: deps.allowPrivate })) ??
      {}) as Record<string, unknown>
  } catch (err) {
    problems.push((err as Error).message)
  }
  if (!problems.length) {
    if (document.did !== org.did) problems.push('the owner document names another DID')
    if (document.organization_id !== org.id) problems.push('the owner document names another organization')
    if (document.domain !== org.domain) problems.push('the owner document is for another domain')
    try {
      const { payload } = await deps.keys.verify(String(document.attestation), {
        issuer: deps.issuer,
        typ: ATTESTATION_TYP,
      })
      if (payload.sub !== org.did || payload.domain !== org.domain)
        problems.push('the attestation is for another organization or domain')
    } catch {
      problems.push('the owner document carries no valid attestation from this issuer')
    }
  }
  const verified = problems.length === 0
  await updateOrg(deps.db, org.id, { domain_verified: verified })
  return { domain: org.domain, verified, problems, checked_at: new Date().toISOString() }
}
