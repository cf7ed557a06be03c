import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose'
import { fetchPublic } from '../../outbound.ts'
import { forgetClients } from '../clients/index.ts'
import { orgClient, type OrgClientDeps } from './clients.ts'
import type { OrgRow } from './store.ts'
import { idpError } from '../../errors.ts'

export interface WorkloadProof {
  scheme: 'spiffe' | 'entra'
  external_id: string
  issuer: string
  jwks_uri: string
  token: string
}

const invalid = (message: string) => idpError('invalid_request', message)

/**
 * Binds a client to the workload it runs as: the workload's own token (a SPIFFE JWT-SVID, or an
 * Entra workload identity token) verified against the issuer's JWKS, for us (`aud` the issuer),
 * naming the external id (`sub`, or Entra's `oid`), and carrying the client's DID as `did`, so
 * the workload vouches for the agent. The binding then shows in the client's own tokens.
 */
export async function bindWorkload(
  deps: OrgClientDeps & { issuer: string; allowPrivate: boolean },
  org: OrgRow,
  clientId: string,
  proof: WorkloadProof,
) {
  const client = await orgClient(deps, org, clientId)
  if (proof.scheme === 'spiffe' && !/^spiffe:\/\/[^/]+\/.+/.test(proof.external_id))
    throw invalid('a SPIFFE external_id is a SPIFFE ID: spiffe://<trust domain>/<path>')
  const jwks = (await fetchPublic(proof.jwks_uri, { allowPrivate: deps.allowPrivate })) as JSONWebKeySet
  if (!Array.isArray(jwks?.keys)) throw invalid('jwks_uri did not answer a JWK set')
  let claims
  try {
    ;({ payload: claims } = await jwtVerify(proof.token, createLocalJWKSet(jwks), {
      issuer: proof.issuer,
      audience: deps.issuer,
      requiredClaims: ['exp'],
      clockTolerance: 30,
    }))
  } catch (err) {
    throw invalid(`the workload token does not verify: ${(err as Error).message}`)
  }
  const subject = proof.scheme === 'entra' ? (claims.oid ?? claims.sub) : claims.sub
  if (subject !== proof.external_id)
    throw invalid(`the workload token is for ${String(subject)}, not ${proof.external_id}`)
  if (claims.did !== client.did) throw invalid('the workload token must carry the client’s DID as did')
  const workload = {
    scheme: proof.scheme,
    external_id: proof.external_id,
    issuer: proof.issuer,
    bound_at: new Date().toISOString(),
  }
  await deps.clients.update(deps.db, clientId, { workload: JSON.stringify(workload) as never })
  forgetClients()
  return orgClient(deps, org, clientId)
}
