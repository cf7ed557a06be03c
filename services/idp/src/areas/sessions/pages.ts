import type { FastifyReply, FastifyRequest } from 'fastify'
import type { IdpDb } from '../../db.ts'
import { idpError } from '../../errors.ts'
import { checkCsrf } from '../../pages/csrf.ts'
import { currentSession, type Session } from './service.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** The live session, set by the `signedIn…` hooks of a page or form. */
    idpSession?: Session
  }
}

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>
/** Where a signed-out browser is sent: the sign-in page, and back here once signed in. */
type SignInUrl = (request: FastifyRequest) => string

/** Sign-in, then back to the page asked for. */
export const backHere: SignInUrl = (request) => `/ui/login?${new URLSearchParams({ return_to: request.url })}`

/**
 * The preamble of the signed-in pages and forms, declared next to a route's schema
 * (`...pages.signedIn()`, `...pages.form('sign in to …')`): the session is looked up in `onRequest`,
 * so a request without one is refused (or sent to sign in) before its query or body is parsed or
 * validated; a form's CSRF token travels in its body, so it is checked after validation, before the
 * handler. The handler reads the session with `sessionOf(request)`.
 */
export function pageHooks({ db, origin }: { db: IdpDb; origin: string }) {
  const lookUp = async (request: FastifyRequest) => {
    request.idpSession = await currentSession(db, request)
    return request.idpSession
  }
  /** Without a session: 303 to `signIn(request)`. */
  const redirecting =
    (signIn: SignInUrl): Hook =>
    async (request, reply) => {
      if (!(await lookUp(request))) return reply.redirect(signIn(request), 303)
    }
  /** Without a session: 401 `login_required`. */
  const refusing =
    (why: string): Hook =>
    async (request) => {
      if (!(await lookUp(request))) throw idpError('login_required', why)
    }
  const csrf: Hook = async (request) => {
    const token = (request.body as { csrf?: unknown } | undefined)?.csrf
    checkCsrf(request, typeof token === 'string' ? token : undefined, origin)
  }
  return {
    /** A page: a signed-out browser signs in and comes back (or goes where `signIn` says). */
    signedIn: (signIn: SignInUrl = backHere) => ({ onRequest: [redirecting(signIn)] }),
    /** A form post: 401 `login_required` (saying `why`) without a session, 403 without its CSRF token. */
    form: (why: string) => ({ onRequest: [refusing(why)], preHandler: [csrf] }),
    /** A form post whose signed-out browser is sent to sign in (303) rather than refused. */
    formSigningIn: (signIn: SignInUrl = backHere) => ({
      onRequest: [redirecting(signIn)],
      preHandler: [csrf],
    }),
    /**
     * As `formSigningIn`, where the way back needs the posted (parsed, not yet validated) body: the
     * session is checked in `preValidation`, still before the body is validated.
     */
    formSigningInWithBody: (signIn: SignInUrl) => ({
      preValidation: [redirecting(signIn)],
      preHandler: [csrf],
    }),
  }
}

export type PageHooks = ReturnType<typeof pageHooks>

/** The session of a request that passed a `pageHooks` hook. */
export function sessionOf(request: FastifyRequest): Session {
  if (!request.idpSession) throw idpError('login_required', 'sign in first')
  return request.idpSession
}
