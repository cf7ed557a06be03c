import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { SESSION_SECURITY, sessionOf } from './hooks.ts'
import { BACKCHANNEL_PATH, CALLBACK_PATH } from './idp-link.ts'
import { type AuthDeps, backchannelLogout, finishLogin, logout, startLogin } from './service.ts'

const tags = ['auth']
const Param = Type.Optional(Type.String({ maxLength: 4000 }))

export function authRoutes(app: App, deps: AuthDeps) {
  app.get(
    '/auth/login',
    {
      schema: {
        summary: 'Starts the sign-in: 302 to the identity provider (code flow, PKCE S256, state, nonce)',
        tags,
      },
    },
    async (_request, reply) => {
      const location = await startLogin(deps, reply)
      return reply.header('cache-control', 'no-store').redirect(location, 302)
    },
  )

  app.get(
    CALLBACK_PATH,
    {
      schema: {
        summary:
          'The sign-in callback: checks iss and state, one token exchange, sets the session cookie, 302 to /console',
        tags,
        // the authorization response's own parameters (RFC 6749 §4.1.2, RFC 9207); others are ignored
        querystring: Type.Object(
          {
            code: Param,
            state: Param,
            iss: Param,
            error: Param,
            error_description: Param,
            session_state: Param,
          },
          { additionalProperties: true },
        ),
      },
    },
    async (request, reply) => {
      await finishLogin(deps, request, reply)
      return reply.header('cache-control', 'no-store').redirect('/console', 302)
    },
  )

  app.post(
    '/auth/logout',
    {
      ...deps.sessions.session,
      schema: {
        summary: 'Ends the console session; names the identity provider’s logout page to end that one too',
        tags,
        security: SESSION_SECURITY,
        response: {
          200: Type.Object({
            signed_out: Type.Literal(true),
            idp_logout_url: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request, reply) => logout(deps, sessionOf(request), reply),
  )

  app.post(
    BACKCHANNEL_PATH,
    {
      schema: {
        summary:
          'OpenID Connect Back-Channel Logout 1.0 receiver: a logout token from the identity provider ends the sessions of its sid or sub',
        tags,
        consumes: ['application/x-www-form-urlencoded'],
        body: Type.Object({ logout_token: Type.String({ minLength: 1, maxLength: 20_000 }) }),
        response: { 200: Type.Object({ ended: Type.Integer() }) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      return { ended: await backchannelLogout(deps, request.body.logout_token) }
    },
  )
}
