import type { Kv } from '@svc/kit'
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { IdpDb } from '../../db.ts'
import {
  deletePasskeysOf,
  hasPasskey,
  insertPasskey,
  passkeyById,
  passkeysOf,
  touchPasskey,
} from './store.ts'

/** Where passkeys belong: the issuer's host is the relying party id, its origin the only origin. */
export interface RelyingParty {
  db: IdpDb
  kv: Kv
  rpId: string
  origin: string
}

const CHALLENGE_TTL_MS = 5 * 60_000

interface Challenge {
  purpose: 'register' | 'sign_in'
  userId?: string
}

async function remember(kv: Kv, challenge: string, value: Challenge) {
  await kv.set(`webauthn:${challenge}`, JSON.stringify(value), CHALLENGE_TTL_MS)
}

/** A challenge answers once, for the purpose (and account) it was made for. */
function consumer(kv: Kv, purpose: Challenge['purpose'], userId?: string) {
  return async (challenge: string) => {
    const stored = await kv.get(`webauthn:${challenge}`)
    if (!stored) return false
    const value = JSON.parse(stored) as Challenge
    if (value.purpose !== purpose || value.userId !== userId) return false
    return kv.setIfAbsent(`webauthn-used:${challenge}`, '1', CHALLENGE_TTL_MS)
  }
}

/**
 * Options for a new passkey: discoverable (so sign-in needs no email), user verification required
 * (so a passkey is a second factor by itself), no attestation (we trust the user, not the vendor).
 */
export async function registrationOptions(
  rp: RelyingParty,
  user: { id: string; email: string; name: string | null },
) {
  const existing = await passkeysOf(rp.db, user.id)
  const options = await generateRegistrationOptions({
    rpName: 'svc',
    rpID: rp.rpId,
    userName: user.email,
    userDisplayName: user.name ?? user.email,
    userID: new TextEncoder().encode(user.id),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  })
  await remember(rp.kv, options.challenge, { purpose: 'register', userId: user.id })
  return options
}

export async function addPasskey(rp: RelyingParty, userId: string, response: RegistrationResponseJSON) {
  const verification = await verifyRegistrationResponse({
    response,
    expectedChallenge: consumer(rp.kv, 'register', userId),
    expectedOrigin: rp.origin,
    expectedRPID: rp.rpId,
    requireUserVerification: true,
  })
  if (!verification.verified) return false
  const { credential, credentialBackedUp } = verification.registrationInfo
  await insertPasskey(rp.db, {
    id: credential.id,
    user_id: userId,
    public_key: Buffer.from(credential.publicKey),
    counter: credential.counter,
    transports: credential.transports ?? [],
    backed_up: credentialBackedUp,
  })
  return true
}

export async function signInOptions(rp: RelyingParty) {
  const options = await generateAuthenticationOptions({ rpID: rp.rpId, userVerification: 'required' })
  await remember(rp.kv, options.challenge, { purpose: 'sign_in' })
  return options
}

/** The account a passkey assertion proves, or undefined; a counter that went backwards is a cloned key. */
export async function signInWithPasskey(rp: RelyingParty, response: AuthenticationResponseJSON) {
  const passkey = await passkeyById(rp.db, response.id)
  if (!passkey) return undefined
  const verification = await verifyAuthenticationResponse({
    response,
    expectedChallenge: consumer(rp.kv, 'sign_in'),
    expectedOrigin: rp.origin,
    expectedRPID: rp.rpId,
    requireUserVerification: true,
    credential: {
      id: passkey.id,
      publicKey: new Uint8Array(passkey.public_key),
      counter: Number(passkey.counter),
      transports: passkey.transports,
    },
  })
  if (!verification.verified) return undefined
  await touchPasskey(rp.db, passkey.id, verification.authenticationInfo.newCounter)
  return passkey.user_id
}

/** What other areas may ask of passkeys (in the caller's db or transaction). */
export const passkeysService = {
  /** Whether the account has a passkey (a second factor for step-up). */
  hasPasskey,
  forgetUser: deletePasskeysOf,
}
