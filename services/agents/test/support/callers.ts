import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import * as oidc from 'openid-client'
import { idp } from '../../../idp/src/app.ts'
import type { IdpConfig } from '../../../idp/src/config.ts'
import { ADMIN, registerClient } from '@svc/testing/idp-flow'

/** The real idp the agents trust (their IDP_URL), on a throwaway database. */
export const startIdp = () =>
  startService(
    idp,
    testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
    { fresh: true },
  )

/** Registers the agents service at the idp as an RFC 8707 resource (as the rental does in development). */
export async function registerResource(service: RunningService<IdpConfig>, identifier: string) {
  const res = await request(`${service.url}/manage/v1/resources`, {
    method: 'POST',
    headers: { 'x-admin-token': ADMIN, 'content-type': 'application/json' },
    body: JSON.stringify({ identifier, name: 'agents under test' }),
  })
  if (res.status !== 201 && res.status !== 409) throw new Error(`resource: ${res.status}`)
}

/** A caller: a confidential client of the idp, with a token from openid-client's client credentials grant. */
export async function newCaller(service: RunningService<IdpConfig>, name: string, resource?: string) {
  const { clientId, config } = await registerClient(service, {
    client_name: name,
    redirect_uris: [`https://${name}.example/cb`],
  })
  const grant = await oidc.clientCredentialsGrant(config, resource ? { resource } : {})
  return { clientId, token: grant.access_token }
}

/** An @a2a-js/sdk client factory whose JSON-RPC calls carry `Authorization: Bearer <token>`. */
export function factoryWithToken(token: string | undefined): ClientFactory {
  const fetchImpl: typeof fetch = (input, init) => {
    const headers = new Headers(init?.headers)
    if (token) headers.set('authorization', `Bearer ${token}`)
    return fetch(input, { ...init, headers })
  }
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  )
}
