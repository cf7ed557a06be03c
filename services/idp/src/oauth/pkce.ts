import { createHash } from 'node:crypto'
import { safeEqual } from '@svc/kit'

// RFC 7636 §4.1: 43 to 128 unreserved characters; an S256 challenge is 43 base64url characters.
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/

export const isS256Challenge = (challenge: string) => CHALLENGE.test(challenge)

/** The S256 challenge a well-formed verifier answers, or null (a malformed or missing verifier answers none). */
export function s256Challenge(verifier: string | undefined): string | null {
  if (!verifier || !VERIFIER.test(verifier)) return null
  return createHash('sha256').update(verifier).digest('base64url')
}

/** RFC 7636 §4.6: BASE64URL(SHA256(verifier)) must equal the challenge. Only S256 exists here. */
export function verifyPkce(verifier: string | undefined, challenge: string): boolean {
  const answer = s256Challenge(verifier)
  return answer !== null && safeEqual(answer, challenge)
}
