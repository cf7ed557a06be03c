import { type App, AppError } from '@svc/kit'
import { Type } from 'typebox'
import { authenticateClient, type ClientAuthDeps } from '../clients/index.ts'
import { currentNonce, type DpopDeps, tokenEndpointProof } from '../../oauth/dpop.ts'
import { ClientAuthFields, formOnly } from '../../oauth/form.ts'
import type { AuthorizeParameters } from '../authorize/index.ts'
import { pushRequest } from './service.ts'
import { idpError } from '../../errors.ts'

const Param = Type.Optional(Type.String({ maxLength: 2000 }))
// RFC 9126 §2.1: the authorization parameters as a form, with client authentication; unknown ones ignored
const pushedRequest = (parameters: AuthorizeParameters['parameters']) =>
  Type.Object({
    ...Object.fromEntries(parameters.map((name) => [name, Param])),
    ...ClientAuthFields,
    request_uri: Param,
  }) as ReturnType<typeof Type.Object<Record<string, typeof Param>>>

/** Pushed authorization requests (RFC 9126): checked now, answered with JSON errors, kept 90 s. */
export function parRoutes(
  app: App,
  deps: ClientAuthDeps & {
    dpop: DpopDeps
    authorize: AuthorizeParameters
  },
) {
  const { db } = deps
  const { parameters, checkParameters } = deps.authorize
  const PushedRequest = pushedRequest(parameters)
  app.post(
    '/par',
    {
      preValidation: formOnly('pushed authorization'),
      schema: {
        summary: 'Pushed authorization request (RFC 9126): returns a request_uri for /authorize, valid 90 s',
        tags: ['oauth'],
        consumes: ['application/x-www-form-urlencoded'],
        body: PushedRequest,
        response: { 201: Type.Object({ request_uri: Type.String(), expires_in: Type.Integer() }) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      const body = request.body as Record<string, string | undefined>
      const client = await authenticateClient(deps, request, body)
      if (body.request_uri !== undefined)
        throw idpError('invalid_request', 'request_uri cannot be pushed (RFC 9126 §2.1)')
      if (!body.redirect_uri || !client.redirect_uris.includes(body.redirect_uri))
        throw idpError('invalid_request', 'redirect_uri is not registered for this client')
      const params: Record<string, string> = Object.fromEntries(
        parameters.flatMap((name) => (body[name] === undefined ? [] : [[name, body[name]!]])),
      )
      // RFC 9449 §10.1: a proof here binds the code to its key, which dpop_jkt, if sent, must name
      const jkt = await tokenEndpointProof(deps.dpop, request)
      if (jkt && params.dpop_jkt !== undefined && params.dpop_jkt !== jkt)
        throw idpError('invalid_dpop_proof', 'dpop_jkt is not the thumbprint of the proof’s key')
      if (jkt) {
        params.dpop_jkt = jkt
        reply.header('dpop-nonce', currentNonce(deps.dpop))
      }
      const checked = await checkParameters(db, params)
      if ('error' in checked) throw new AppError(400, checked.error, checked.description)
      return reply.code(201).send(await pushRequest(db, client.client_id, params))
    },
  )
}
