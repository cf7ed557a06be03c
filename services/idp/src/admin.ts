import { safeEqual } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { idpError } from './errors.ts'

/** The management API and /metrics take the admin token in X-Admin-Token, compared in constant time. */
export function requireAdmin(request: FastifyRequest, adminToken: string): void {
  const token = request.headers['x-admin-token']
  if (typeof token !== 'string' || !safeEqual(token, adminToken))
    throw idpError('invalid_token', 'a valid X-Admin-Token header is required')
}
