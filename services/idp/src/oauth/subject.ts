import { createHash } from 'node:crypto'

/**
 * The `sub` a client sees (OpenID Connect Core §8): the user's id for public subjects, and for
 * pairwise ones a hash of the client's sector (the host of its first redirect URI), the user and
 * a salt that is never rotated, so it is stable forever and differs between sectors.
 */
export function subjectFor(
  client: { subject_type: 'public' | 'pairwise'; redirect_uris: string[] },
  userId: string,
  salt: string,
): string {
  if (client.subject_type === 'public') return userId
  const sector = new URL(client.redirect_uris[0]!).host
  return createHash('sha256').update(`${sector}\n${userId}\n${salt}`).digest('base64url')
}
