import { AppError, type Kv } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import type { IdpDb } from '../db.ts'
import type { SigningKeys } from '../areas/keys/service.ts'
import { challenge } from './challenge.ts'
import { checkProof, currentNonce, DPOP_ALGS, type DpopDeps, DpopError } from './dpop.ts'

// RFC 6750 §3 and RFC 9449 §7.1: a failed check answers 401 with a challenge in the scheme used
const refusal = (
  scheme: 'Bearer' | 'DPoP',
  error: string,
  message: string,
  extra: Record<string, string> = {},
) =>
  new AppError(401, error, message, {
    'www-authenticate': challenge(scheme, {
      error,
      error_description: message,
      algs: scheme === 'DPoP' ? DPOP_ALGS.join(' ') : undefined,
    }),
    ...extra,
  })

export type PresentedTokenDeps = { db: IdpDb; kv: Kv; keys: SigningKeys; issuer: string; dpop: DpopDeps }

/** The verified access token of the request, sender-constrained when it is bound to a DPoP key. */
export async function presentedToken(deps: PresentedTokenDeps, request: FastifyRequest) {
  const header = request.headers.authorization ?? ''
  const scheme = header.startsWith('DPoP ') ? 'DPoP' : 'Bearer'
  const invalidToken = (message: string) => refusal(scheme, 'invalid_token', message)
  // RFC 6750 §3.1: a request with no credential at all gets the challenge without an error code
  if (!header.trim())
    throw new AppError(401, 'invalid_token', 'an access token is required (Authorization: Bearer or DPoP)', {
      'www-authenticate': [
        challenge('Bearer', { realm: deps.issuer }),
        challenge('DPoP', { realm: deps.issuer, algs: DPOP_ALGS.join(' ') }),
      ].join(', '),
    })
  if (!header.startsWith('Bearer ') && !header.startsWith('DPoP '))
    throw invalidToken('an access token is required (Authorization: Bearer or DPoP)')
  const token = header.slice(scheme.length + 1)
  let payload: Record<string, unknown>
  try {
    payload = (await deps.keys.verify(token, { issuer: deps.issuer, typ: 'at+jwt' })).payload
  } catch {
    throw invalidToken('the access token is invalid or expired')
  }
  const bound = (payload.cnf as { jkt?: string } | undefined)?.jkt
  if (scheme === 'Bearer' && bound)
    throw invalidToken('this access token is bound to a DPoP key: use the DPoP scheme')
  if (scheme === 'DPoP') {
    if (!bound) throw invalidToken('this access token is not bound to a DPoP key: use the Bearer scheme')
    let jkt
    try {
      jkt = await checkProof(deps.dpop, request, token)
    } catch (err) {
      if (!(err instanceof DpopError)) throw err
      throw refusal('DPoP', err.code, err.message, { 'dpop-nonce': currentNonce(deps.dpop) })
    }
    if (!jkt) throw refusal('DPoP', 'invalid_dpop_proof', 'a DPoP proof is required')
    if (jkt !== bound)
      throw invalidToken('the DPoP proof is signed by another key than the token is bound to')
  }
  return { payload, invalidToken }
}
