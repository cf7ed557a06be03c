import type { App } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { withParams } from '../../oauth/redirect.ts'
import { currentSession, endSession } from '../sessions/index.ts'
import { sendLocalMessage, signedOut, signedOutCsp } from '../../pages/layout.ts'
import { announceLogout, type LogoutDeps } from './service.ts'
import { onwardOf } from '../clients/index.ts'

const Param = Type.Optional(Type.String({ maxLength: 4000 }))
const LogoutQuery = Type.Object({
  id_token_hint: Param,
  post_logout_redirect_uri: Param,
  state: Param,
  client_id: Param,
  // RP-Initiated Logout 1.0 §2: the languages of the pages shown
  ui_locales: Param,
})

/** OpenID Connect RP-Initiated Logout 1.0. */
export function logoutRoutes(app: App, deps: LogoutDeps) {
  const handler = async (
    request: FastifyRequest,
    reply: FastifyReply,
    params: { id_token_hint?: string; post_logout_redirect_uri?: string; state?: string; client_id?: string },
  ) => {
    let clientId = params.client_id
    if (params.id_token_hint) {
      try {
        // a hint may have expired: it names the client and the session, it does not authenticate anyone
        const { payload } = await deps.keys.verify(params.id_token_hint, {
          issuer: deps.issuer,
          clockTolerance: 10 * 365 * 86_400,
        })
        const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud
        if (clientId && clientId !== aud) throw new Error('client_id differs from the hint')
        clientId = aud
      } catch {
        return sendLocalMessage(reply, 400, 'Sign-out failed', 'The sign-out link is not valid.')
      }
    }
    let redirect: string | undefined
    if (params.post_logout_redirect_uri) {
      const client = clientId
        ? await deps.clients.anyById(deps.db, clientId, ['post_logout_redirect_uris'])
        : undefined
      if (!client || !client.post_logout_redirect_uris.includes(params.post_logout_redirect_uri))
        return sendLocalMessage(
          reply,
          400,
          'Sign-out failed',
          'The return address is not registered for this application.',
        )
      redirect = withParams(params.post_logout_redirect_uri, { state: params.state })
    }
    const session = await currentSession(deps.db, request)
    await endSession(deps.db, request, reply)
    const frames = session ? await announceLogout(deps, session) : []
    // the application that signed the person out (its name, its home), else svc's console
    const onward = await onwardOf(deps.db, request, clientId)
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', signedOutCsp(frames))
      .send(signedOut(request, frames, redirect, onward))
  }
  const schema = {
    summary: 'RP-initiated logout: ends the session, tells every client, returns to an allow-listed URI',
    tags: ['oauth'],
  }
  app.get('/logout', { schema: { ...schema, querystring: LogoutQuery } }, (request, reply) =>
    handler(request, reply, request.query),
  )
  app.post('/logout', { schema: { ...schema, body: LogoutQuery } }, (request, reply) =>
    handler(request, reply, request.body),
  )
}
