import { type App, LangQuery, moneyLocaleOf } from '@svc/kit'
import { Type } from 'typebox'
import { BACKCHANNEL_PATH, CALLBACK_PATH } from './idp-link.ts'
import { type AuthDeps, backchannelLogout, finishLogin, logout, startLogin } from './service.ts'
import { finishStepUp, startStepUp } from './step-up.ts'
import { STEP_UP_PATH } from './step-up-guard.ts'
import { route, sessionOf } from '../../http/index.ts'
import { CLI_CLIENT_ID, RESOURCE_NAME } from './cli-client.ts'
import { DPOP_ALGS } from './dpop.ts'
import { RESOURCE_METADATA_PATH } from './bearer.ts'

const tags = ['auth']
const Param = Type.Optional(Type.String({ maxLength: 4000 }))

export function authRoutes(app: App, deps: AuthDeps) {
  app.get(
    '/auth/login',
    {
      schema: {
        summary: 'Starts the sign-in: 302 to the identity provider (code flow, PKCE S256, state, nonce)',
        tags,
        querystring: Type.Object({
          // passed on to the idp (OIDC Core §3.1.2.1): its pages then speak the page's language
          ui_locales: Type.Optional(
            Type.String({ maxLength: 100, pattern: '^[A-Za-z0-9-]+( [A-Za-z0-9-]+)*$' }),
          ),
        }),
      },
    },
    async (request, reply) => {
      const uiLocales = request.query.ui_locales
      const location = await startLogin(deps, reply, undefined, uiLocales ? { ui_locales: uiLocales } : {})
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
      const location = await finishLogin(deps, request, reply, (pending, exchange) =>
        finishStepUp(deps, request, pending, exchange),
      )
      return reply.header('cache-control', 'no-store').redirect(location, 302)
    },
  )

  app.get(
    STEP_UP_PATH,
    {
      ...route.session(),
      schema: {
        summary:
          'Step-up: 302 to the identity provider for a fresh sign-in with a second factor (acr_values urn:svc:mfa, max_age 0, PKCE); back at return_to',
        description:
          'On return the session keeps the ID token’s acr and auth_time; sensitive routes then pass for RENTAL_STEP_UP_MAX_AGE_S seconds. An account with no second factor gets 403 second_factor_missing naming the idp’s account page.',
        tags,
        querystring: Type.Object(
          {
            return_to: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 2000,
                description: 'a path of this site; default /console',
              }),
            ),
          },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const location = await startStepUp(deps, sessionOf(request), request.query.return_to, reply)
      return reply.header('cache-control', 'no-store').redirect(location, 302)
    },
  )

  app.post(
    '/auth/logout',
    {
      ...route.session(),
      schema: {
        summary: 'Ends the console session; names the identity provider’s logout page to end that one too',
        description:
          'The idp’s signed-out page is asked for in `lang` (ui_locales), else the console’s language cookie, else the member’s language.',
        tags,
        querystring: LangQuery({ additionalProperties: false }),
        response: {
          200: Type.Object({
            signed_out: Type.Literal(true),
            idp_logout_url: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (request, reply) => {
      const kept = request.cookies.console_lang
      const lang = request.query.lang ?? (kept === 'ar' || kept === 'en' ? kept : moneyLocaleOf(request))
      return logout(deps, sessionOf(request), reply, lang)
    },
  )

  app.get(
    RESOURCE_METADATA_PATH,
    {
      schema: {
        summary:
          'RFC 9728 protected-resource metadata: the rental as a resource of the idp, for access tokens on its signed-in routes',
        description: `A program signs in at the authorization server (the idp) as the public client ${CLI_CLIENT_ID} with the device grant (RFC 8628), asking for \`resource\` = this document's \`resource\`, and calls the signed-in routes with \`Authorization: Bearer\` (or \`DPoP\` with a proof).`,
        tags,
        response: {
          200: Type.Object({
            resource: Type.String(),
            authorization_servers: Type.Array(Type.String()),
            resource_name: Type.String(),
            bearer_methods_supported: Type.Array(Type.String()),
            dpop_signing_alg_values_supported: Type.Array(Type.String()),
            svc_cli_client_id: Type.String({ description: 'the public client a command line signs in as' }),
          }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return {
        resource: deps.baseUrl,
        authorization_servers: [deps.link.wanted.issuer],
        resource_name: RESOURCE_NAME,
        bearer_methods_supported: ['header'],
        dpop_signing_alg_values_supported: DPOP_ALGS,
        svc_cli_client_id: CLI_CLIENT_ID,
      }
    },
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
