import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { testEnv } from '@svc/kit/testing'
import { generateKeyPair } from 'jose'
import * as oauth from 'oauth4webapi'
import * as oidc from 'openid-client'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'
import { ADMIN, registerClient } from '@svc/testing/idp-flow'

const CALLBACK = 'https://shop.example.com/callback'

describe('OAuth details: RFC 6750 §3.1 challenges, request objects refused by name', () => {
  let service: RunningService<IdpConfig>
  let config: oidc.Configuration
  let clientId: string

  before(async () => {
    service = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_IP: '0' }), {
      fresh: true,
    })
    ;({ config, clientId } = await registerClient(service, { redirect_uris: [CALLBACK] }))
  })
  after(() => service.close())

  /** The challenges of a /userinfo answer, as oauth4webapi reads them. */
  const challengesOf = async (headers: Record<string, string>) => {
    const res = await fetch(`${service.url}/userinfo`, { headers })
    assert.equal(res.status, 401)
    const as = config.serverMetadata() as oauth.AuthorizationServer
    try {
      await oauth.processUserInfoResponse(as, { client_id: clientId }, oauth.skipSubjectCheck, res)
    } catch (err) {
      assert.ok(err instanceof oauth.WWWAuthenticateChallengeError, String(err))
      return err.cause
    }
    throw new Error('no challenge')
  }

  it('/userinfo without any credential: a challenge with the realm and no error code', async () => {
    const challenges = await challengesOf({})
    assert.deepEqual(
      challenges.map((c) => c.scheme),
      ['bearer', 'dpop'],
    )
    for (const challenge of challenges) {
      assert.equal(challenge.parameters.realm, service.url)
      assert.equal(challenge.parameters.error, undefined)
      assert.equal(challenge.parameters.error_description, undefined)
    }
    // a token that is not valid is an error: invalid_token
    const [bad] = await challengesOf({ authorization: 'Bearer not.a.token' })
    assert.equal(bad!.parameters.error, 'invalid_token')
  })

  it('discovery says request objects and foreign request URIs are not supported', () => {
    const metadata = config.serverMetadata()
    assert.equal(metadata.request_parameter_supported, false)
    assert.equal(metadata.request_uri_parameter_supported, false)
  })

  it('a request object (JAR) answers request_not_supported at the redirect URI, never ignored', async () => {
    const { privateKey } = await generateKeyPair('ES256')
    const url = await oidc.buildAuthorizationUrlWithJAR(
      config,
      {
        redirect_uri: CALLBACK,
        scope: 'openid',
        state: 'jar-state',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      },
      privateKey,
    )
    assert.ok(url.searchParams.has('request'))
    const res = await fetch(url, { redirect: 'manual' })
    assert.equal(res.status, 302)
    const back = new URL(res.headers.get('location')!)
    assert.equal(`${back.origin}${back.pathname}`, CALLBACK)
    assert.equal(back.searchParams.get('error'), 'request_not_supported')
    assert.equal(back.searchParams.get('state'), 'jar-state')
    assert.equal(back.searchParams.get('iss'), service.url)

    // with the parameters in the query too, still refused (never a code for an ignored request object)
    const both = new URL(`${service.url}/authorize`)
    both.search = new URLSearchParams({
      client_id: clientId,
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid',
      state: 's2',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
      request: url.searchParams.get('request')!,
    }).toString()
    const refused = new URL((await fetch(both, { redirect: 'manual' })).headers.get('location')!)
    assert.equal(refused.searchParams.get('error'), 'request_not_supported')
    assert.equal(refused.searchParams.get('state'), 's2')
  })

  it('a request_uri not from PAR answers request_uri_not_supported; an unregistered redirect URI gets a page', async () => {
    const query = {
      client_id: clientId,
      response_type: 'code',
      redirect_uri: CALLBACK,
      scope: 'openid',
      state: 's3',
      request_uri: 'https://shop.example.com/request.jwt',
    }
    const res = await fetch(`${service.url}/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' })
    assert.equal(res.status, 302)
    const back = new URL(res.headers.get('location')!)
    assert.equal(back.searchParams.get('error'), 'request_uri_not_supported')
    assert.equal(back.searchParams.get('state'), 's3')
    const elsewhere = await fetch(
      `${service.url}/authorize?${new URLSearchParams({ ...query, redirect_uri: 'https://evil.example/cb' })}`,
      { redirect: 'manual' },
    )
    assert.equal(elsewhere.status, 400)
    assert.equal(elsewhere.headers.get('location'), null)
  })
})
