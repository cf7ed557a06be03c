import { type App, notFound, rateLimit } from '@svc/kit'
import QRCode from 'qrcode'
import { Type } from 'typebox'
import { authenticateClient } from '../clients/index.ts'
import { ClientAuthFields, formOnly } from '../../oauth/form.ts'
import { devicePages, type PageDeps } from './pages.ts'
import { authorizeDevice, pendingRequest, verificationUris } from './service.ts'

// RFC 8628 §3.1 (RFC 6749 §3.2): a form; unknown parameters are ignored, repeated ones refused
const DeviceAuthorizationRequest = Type.Object({
  scope: Type.Optional(Type.String({ maxLength: 1000 })),
  resource: Type.Optional(Type.String({ maxLength: 2000 })),
  ...ClientAuthFields,
})
const UserCodeQuery = Type.Object({ user_code: Type.String({ maxLength: 40 }) })

export interface DeviceRouteDeps extends PageDeps {
  /** Requests per minute per IP at /device_authorization, as at /token; 0 turns it off. */
  ratePerMinute: number
}

/** The device authorization grant (RFC 8628): the client's endpoint, the QR code, and the user's pages. */
export function deviceRoutes(app: App, deps: DeviceRouteDeps) {
  const perIp = rateLimit(deps.kv, 'device-ip', { limit: deps.ratePerMinute, windowMs: 60_000 }, 'slow_down')
  // the QR code answers whether a user code is live, so it is throttled like the pages (RFC 8628 §5.1)
  const qrGuesses = rateLimit(deps.kv, 'device-qr', { limit: 30, windowMs: 60_000 })

  app.post(
    '/device_authorization',
    {
      preValidation: formOnly('device authorization'),
      schema: {
        summary:
          'Device authorization (RFC 8628 §3.1): a device code to poll /token with, a user code to show',
        tags: ['oauth'],
        consumes: ['application/x-www-form-urlencoded'],
        body: DeviceAuthorizationRequest,
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      await perIp(request, reply)
      const client = await authenticateClient(deps, request, request.body)
      return authorizeDevice(deps, client.client_id, request.body)
    },
  )

  app.get(
    '/device/qr.svg',
    {
      schema: {
        summary: 'The complete verification URI of a live user code as an SVG QR code; 404 once it is not',
        tags: ['oauth'],
        querystring: UserCodeQuery,
      },
    },
    async (request, reply) => {
      await qrGuesses(request, reply)
      const pending = await pendingRequest(deps, request.query.user_code)
      if (!pending) throw notFound('no device request waits for this user code')
      const uri = verificationUris(deps.issuer, pending.user_code).verification_uri_complete
      return reply
        .header('cache-control', 'no-store')
        .type('image/svg+xml')
        .send(await QRCode.toString(uri, { type: 'svg' }))
    },
  )

  devicePages(app, deps)
}
