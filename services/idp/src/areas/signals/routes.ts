import { type App, type Kv } from '@svc/kit'
import { Type } from 'typebox'
import { authenticateClient } from '../clients/index.ts'
import { ClientAuthFields } from '../../oauth/form.ts'
import { checkCallerUrl } from '../../outbound.ts'
import { poll, type SignalDeps, ssfConfiguration, status } from './service.ts'
import { dropStream, saveStream } from './store.ts'
import { idpError } from '../../errors.ts'

/** Shared signals (identity-provider.md): each client manages its stream, polls it, and sees its backlog. */
export function signalRoutes(app: App, deps: SignalDeps & { kv: Kv }) {
  const tags = ['signals']
  const client = (request: Parameters<typeof authenticateClient>[1], body: Record<string, unknown> = {}) =>
    authenticateClient(deps, request, body)

  app.get(
    '/.well-known/ssf-configuration',
    { schema: { summary: 'Shared Signals Framework 1.0 transmitter metadata', tags: ['discovery'] } },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').send(ssfConfiguration(deps.issuer)),
  )

  app.post(
    '/ssf/stream',
    {
      schema: {
        summary:
          'Subscribe: delivery=push with endpoint_url (RFC 8935), delivery=poll (RFC 8936), or empty to unsubscribe',
        tags,
        body: Type.Object({
          delivery: Type.Union([Type.Literal('push'), Type.Literal('poll'), Type.Literal('')]),
          endpoint_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
          ...ClientAuthFields,
        }),
      },
    },
    async (request) => {
      const { delivery, endpoint_url, ...credentials } = request.body
      const caller = await client(request, credentials)
      if (delivery === '') {
        await dropStream(deps.db, caller.client_id)
        return status(deps, caller.client_id)
      }
      if ((delivery === 'push') !== (endpoint_url !== undefined))
        throw idpError('invalid_request', 'endpoint_url goes with delivery=push, and only with it')
      if (endpoint_url)
        await checkCallerUrl(endpoint_url, 'endpoint_url', {
          allowPrivate: deps.allowPrivate,
          code: 'invalid_request',
        })
      await saveStream(deps.db, caller.client_id, delivery, endpoint_url ?? null)
      return status(deps, caller.client_id)
    },
  )

  app.post(
    '/ssf/poll',
    {
      schema: {
        summary: 'RFC 8936 poll: acknowledge with ack, receive the waiting SETs',
        tags,
        body: Type.Object({
          ack: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 1000 })),
          maxEvents: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
          returnImmediately: Type.Optional(Type.Boolean()),
          setErrs: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          ...ClientAuthFields,
        }),
      },
    },
    async (request) => {
      const { ack, maxEvents, returnImmediately: _immediately, setErrs, ...credentials } = request.body
      const caller = await client(request, credentials)
      // a SET the receiver refuses (setErrs) is acknowledged as well: it will not be sent again
      return poll(deps, caller.client_id, { ack: [...(ack ?? []), ...Object.keys(setErrs ?? {})], maxEvents })
    },
  )

  app.get(
    '/ssf/status',
    { schema: { summary: 'The stream and its backlog of undelivered events', tags } },
    async (request) => status(deps, (await client(request)).client_id),
  )
}
