import { createHash } from 'node:crypto'

/**
 * The `sub` a client sees (OpenID Connect Core §8): the user's id for public subjects, and for
 * pairwise ones a hash of the client's sector, the user and a salt that is never rotated, so it
 * is stable forever and differs between sectors. An organization's clients share one sector, the
 * organization (identity-provider.md, Subject identifiers); a platform client's is the host of
 * its first redirect URI.
 */
export function subjectFor(
  client: { subject_type: 'public' | 'pairwise'; redirect_uris: string[]; organization_id: string | null },
  userId: string,
  salt: string,
): string {
  if (client.subject_type === 'public') return userId
  const sector = client.organization_id
    ? `organization:${client.organization_id}`
    : new URL(client.redirect_uris[0]!).host
  return createHash('sha256').update(`${sector}\n${userId}\n${salt}`).digest('base64url')
}
