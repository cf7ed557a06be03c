import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { appLinks, sendLocalMessage } from '../../pages/layout.ts'
import { onwardOf } from '../clients/index.ts'
import { AUTHORIZE_PARAMETERS, authorize, type AuthorizeDeps } from './service.ts'

const Param = Type.Optional(Type.String({ maxLength: 2000 }))

export function authorizeRoutes(app: App, deps: AuthorizeDeps) {
  app.get(
    '/authorize',
    {
      schema: {
        summary: 'The authorization endpoint: code flow with PKCE S256',
        tags: ['oauth'],
        // RFC 6749 §3.1: unknown parameters are ignored; a repeated one fails validation
        querystring: Type.Object({
          ...Object.fromEntries(AUTHORIZE_PARAMETERS.map((name) => [name, Param])),
          request_uri: Type.Optional(Type.String({ maxLength: 2000 })),
          // OpenID Connect Core §6: not supported, refused by name (request_not_supported)
          request: Type.Optional(Type.String({ maxLength: 8000 })),
        }),
      },
    },
    async (request, reply) => {
      const outcome = await authorize(deps, request, request.query)
      if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302)
      // back to the application the link names when it is registered, else to svc's console
      const onward = await onwardOf(deps.db, request)
      return sendLocalMessage(reply, outcome.status, outcome.title, outcome.message, {}, [
        ...appLinks(onward),
        { href: '/ui/account', text: 'Back to your account' },
      ])
    },
  )
}
