import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import type { Operation } from '@svc/kit/testing/sweep/operations'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, browser, registerClient } from '@svc/testing/idp-flow'
import { asOrg, signUpOrg } from '@svc/testing/idp-orgs'

const CALLBACK = 'https://rp.example.com/cb'

/** An organization with a confidential client and a resource of its own. */
export async function orgWithObjects(service: RunningService<IdpConfig>, name: string) {
  const org = await signUpOrg(service, name)
  const call = asOrg(service, org.api_key)
  const client = await call('POST', '/orgs/clients', {
    client_name: `${name} client`,
    client_type: 'confidential',
    redirect_uris: [CALLBACK],
  })
  const resource = await call('POST', '/orgs/resources', {
    identifier: `https://api.${name.toLowerCase()}.example.com`,
    name: `${name} API`,
    scopes: ['read'],
  })
  const clientId = client.body.client_id as string
  const resourceId = resource.body.id as string
  if (!clientId || !resourceId)
    throw new Error(`${name}: ${JSON.stringify(client.body)} ${JSON.stringify(resource.body)}`)
  return {
    key: org.api_key,
    id: org.organization_id,
    call,
    clientId,
    clientSecret: client.body.client_secret as string,
    /** Its objects by the collection their id appears under in the paths. */
    ids: { clients: clientId, resources: resourceId } as Record<string, string>,
  }
}

/** The idp, an organization, and a user signed in through the code flow (session and access token). */
export async function startIdpForSweep() {
  const service = await startService(
    idp,
    testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
    { fresh: true },
  )
  const { config, clientId, secret } = await registerClient(service, { redirect_uris: [CALLBACK] })
  const user = browser(service, config, CALLBACK)
  const tokens = await user.signIn()
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`
  return { service, user, accessToken: tokens.access_token, basic, clientId }
}

/**
 * The credential of an operation's Auth class (identity-provider.md: A admin token, O organization
 * key, C client authentication, U user access token, S session); P and signed routes get none.
 */
export function credentialFor(
  setup: Awaited<ReturnType<typeof startIdpForSweep>>,
  orgKey: string,
): (op: Operation) => Record<string, string> {
  return (op): Record<string, string> => {
    switch (op.auth) {
      case 'A':
        return { 'x-admin-token': ADMIN }
      case 'O':
        return { authorization: `Bearer ${orgKey}` }
      case 'C':
        return { authorization: setup.basic }
      case 'U':
      case 'U+C':
        return { authorization: `Bearer ${setup.accessToken}` }
      case 'S':
        return { cookie: setup.user.jar.header() }
      case 'P':
      case 'signed':
        return {}
      default:
        throw new Error(
          `the sweep holds no credential for ${op.method} ${op.path} (auth ${op.auth}): add one`,
        )
    }
  }
}
