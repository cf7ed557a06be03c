import type { Kv } from '@svc/kit'

/** Revoked access tokens, by `jti`, until they would have expired anyway (shared through Redis). */
export const denyAccessToken = (kv: Kv, jti: string, exp: number) =>
  kv.set(`deny:at:${jti}`, '1', Math.max(1000, exp * 1000 - Date.now()))

export const isDenied = async (kv: Kv, jti: unknown) =>
  typeof jti === 'string' && (await kv.get(`deny:at:${jti}`)) !== null
