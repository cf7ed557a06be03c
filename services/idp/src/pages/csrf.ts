import { randomBytes } from 'node:crypto'
import { forbidden, safeEqual } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'

export const CSRF_COOKIE = 'svc_csrf'

/**
 * Forms carry a token that must equal the one in an HttpOnly, SameSite=Strict cookie (the
 * double-submit pattern): another site can neither read the cookie nor make the browser send it.
 */
export function csrfToken(request: FastifyRequest, reply: FastifyReply, secure: boolean): string {
  const existing = request.cookies[CSRF_COOKIE]
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing
  const token = randomBytes(32).toString('base64url')
  reply.setCookie(CSRF_COOKIE, token, { httpOnly: true, sameSite: 'strict', secure, path: '/' })
  return token
}

/** Refuses a form post whose token does not match its cookie, or that comes from another origin. */
export function checkCsrf(request: FastifyRequest, formToken: string | undefined, origin: string): void {
  const cookie = request.cookies[CSRF_COOKIE]
  const sentOrigin = request.headers.origin
  if (sentOrigin && sentOrigin !== origin)
    throw forbidden('this form was posted from another site', 'invalid_request')
  if (!cookie || !formToken || !safeEqual(formToken, cookie))
    throw forbidden(
      'the form has expired or did not come from this site: reload the page and try again',
      'invalid_request',
    )
}

/** The body of a form whose only field is its CSRF token. */
export const CsrfOnly = Type.Object({ csrf: Type.String({ maxLength: 100 }) })
