import { AppError, safeEqual } from '@svc/kit'
import type { FastifyRequest } from 'fastify'

/** The management API and /metrics take the admin token in X-Admin-Token, compared in constant time. */
export function requireAdmin(request: FastifyRequest, adminToken: string): void {
  const token = request.headers['x-admin-token']
  if (typeof token !== 'string' || !safeEqual(token, adminToken))
    throw new AppError(401, 'invalid_token', 'a valid X-Admin-Token header is required')
}
