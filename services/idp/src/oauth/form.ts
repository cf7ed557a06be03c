import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { idpError } from '../errors.ts'

/**
 * RFC 6749 §3.2, RFC 7009 §2.1, RFC 7662 §2.1: these requests are forms. Checked before the body is
 * validated, so a JSON or text body is told what to send instead of which field it lacks.
 */
export const formOnly = (endpoint: string) => async (request: FastifyRequest) => {
  if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
    throw idpError('invalid_request', `the ${endpoint} request is a form (application/x-www-form-urlencoded)`)
}

/** Client authentication in a form body (RFC 6749 §2.3.1, RFC 7523 §2.2). */
export const ClientAuthFields = {
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  client_assertion: Type.Optional(Type.String({ maxLength: 8000 })),
  client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
}
