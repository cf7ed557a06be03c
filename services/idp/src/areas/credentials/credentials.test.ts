import assert from 'node:assert/strict'
import { createHash, randomBytes, type webcrypto } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, type ServiceSpec, startService } from '@svc/kit'
import { CookieJar, request, testEnv } from '@svc/kit/testing'
import { b64uEncode } from '@svc/trust/base64url'
import { verifyEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import { didKeyFromEd25519, didKeyVerificationMethod, ed25519FromDidKey } from '@svc/trust/did-key'
import { generateEd25519 } from '@svc/trust/ed25519'
import { Openid4vciClient, setGlobalConfig } from '@openid4vc/openid4vci'
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose'
import { sql } from 'kysely'
import { idp } from '../../app.ts'
import type { IdpConfig } from '../../config.ts'
import { DEMO_EMAIL } from '../accounts/service.ts'
import { ADMIN, createClient, csrfOf, signInOnPage } from '@svc/testing/idp-flow'

// the idp runs on http://127.0.0.1 in tests; the library otherwise insists on https
setGlobalConfig({ allowInsecureUrls: true })

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code'
const JWT_VC = 'SvcIdentityCredential'
const LDP_VC = 'SvcIdentityCredential_ldp_vc'

/** A wallet's Ed25519 did:key, usable by jose. */
async function didKeyHolder() {
  const pair = generateEd25519()
  const did = didKeyFromEd25519(pair.publicKey)
  const x = b64uEncode(pair.publicKey)
  const privateKey = await importJWK({ kty: 'OKP', crv: 'Ed25519', x, d: b64uEncode(pair.seed) }, 'EdDSA')
  return { did, kid: didKeyVerificationMethod(did), publicJwk: { kty: 'OKP', crv: 'Ed25519', x }, privateKey }
}

/** A wallet's P-256 key, named by its JWK. */
async function jwkHolder() {
  const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
  const publicJwk = await exportJWK(publicKey)
  return { publicJwk, privateKey, jkt: await calculateJwkThumbprint(publicJwk) }
}

describe('OpenID4VCI: credential offers, the pre-authorized code, nonces and the credential endpoint', () => {
  let service: RunningService<IdpConfig>
  let issuerDid: string
  let clockMs = Date.now()
  const jar = new CookieJar()

  before(async () => {
    const spec: ServiceSpec<IdpConfig> = {
      ...idp,
      readConfig: (env, common) => ({ ...idp.readConfig(env, common), now: () => new Date(clockMs) }),
    }
    service = await startService(
      spec,
      testEnv({ IDP_ADMIN_TOKEN: ADMIN, IDP_TOKEN_RATE_PER_MIN_CLIENT: '0', IDP_TOKEN_RATE_PER_MIN_IP: '0' }),
      { fresh: true },
    )
    issuerDid = (await request(`${service.url}/.well-known/svc-issuer.json`)).body.did as string
    const login = await jar.fetch(`${service.url}/ui/login?return_to=%2Fui%2Faccount`)
    await signInOnPage(service, jar, await login.text())
  })
  after(async () => service.close())

  /** The signed-in user asks for an offer on the account page, as a browser would. */
  async function offer(withTxCode: boolean) {
    const account = await (await jar.fetch(`${service.url}/ui/account`)).text()
    assert.match(account, /action="\/ui\/credentials\/offer"/)
    const form = new URLSearchParams({ csrf: csrfOf(account) })
    if (withTxCode) form.set('tx_code', 'on')
    const res = await jar.fetch(`${service.url}/ui/credentials/offer`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('cache-control'), 'no-store')
    const page = await res.text()
    const uri = /data-offer="([^"]+)"/.exec(page)![1]!.replaceAll('&amp;', '&')
    const txCode = /data-tx-code="(\d+)"/.exec(page)?.[1]
    const value = JSON.parse(new URL(uri).searchParams.get('credential_offer')!) as {
      credential_issuer: string
      grants: Record<string, { 'pre-authorized_code': string; tx_code?: unknown }>
    }
    return { uri, txCode, code: value.grants[PRE_AUTH]!['pre-authorized_code'], value }
  }

  /** An independent wallet: @openid4vc/openid4vci, with jose signing its key proofs. */
  function wallet(keys: Map<string, webcrypto.CryptoKey>) {
    return new Openid4vciClient({
      callbacks: {
        fetch,
        clientAuthentication: () => {},
        generateRandom: (n) => randomBytes(n),
        hash: (data, alg) => createHash(alg.replace('-', '').toLowerCase()).update(data).digest(),
        signJwt: async (signer, { header, payload }) => {
          const name =
            signer.method === 'did' ? signer.didUrl : signer.method === 'jwk' ? signer.publicJwk.x! : ''
          const jwt = await new SignJWT(payload as never)
            .setProtectedHeader(header as never)
            .sign(keys.get(name)!)
          const signerJwk =
            signer.method === 'jwk'
              ? signer.publicJwk
              : {
                  kty: 'OKP',
                  crv: 'Ed25519',
                  x: b64uEncode(ed25519FromDidKey(signer.method === 'did' ? signer.didUrl : '')),
                }
          return { jwt, signerJwk }
        },
      },
    })
  }

  const token = (body: Record<string, string>) =>
    fetch(`${service.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    })
  const nonce = async () =>
    ((await (await fetch(`${service.url}/nonce`, { method: 'POST' })).json()) as { c_nonce: string }).c_nonce
  const credential = (accessToken: string | undefined, body: unknown) =>
    fetch(`${service.url}/credential`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
      },
      body: JSON.stringify(body),
    })
  const issuedCount = async () => {
    const { rows } = await sql<{
      n: number
    }>`select count(*)::int as n from receipt_outbox where receipt_type = 'credential.issued'`.execute(
      service.ctx.database!.db,
    )
    return rows[0]!.n
  }

  it('describes the credential issuer and advertises the pre-authorized code grant', async () => {
    const meta = await request(`${service.url}/.well-known/openid-credential-issuer`)
    assert.equal(meta.status, 200)
    assert.equal(meta.body.credential_issuer, service.url)
    assert.equal(meta.body.credential_endpoint, `${service.url}/credential`)
    assert.equal(meta.body.nonce_endpoint, `${service.url}/nonce`)
    const configs = meta.body.credential_configurations_supported as Record<string, Record<string, unknown>>
    assert.equal(configs[JWT_VC]!.format, 'jwt_vc_json')
    assert.equal(configs[LDP_VC]!.format, 'ldp_vc')
    assert.deepEqual(configs[JWT_VC]!.proof_types_supported, {
      jwt: { proof_signing_alg_values_supported: ['EdDSA', 'ES256'] },
    })
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const as = await request(`${service.url}${path}`)
      assert.ok((as.body.grant_types_supported as string[]).includes(PRE_AUTH))
      assert.equal(as.body['pre-authorized_grant_anonymous_access_supported'], true)
    }
    const res = await fetch(`${service.url}/nonce`, { method: 'POST' })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('cache-control'), 'no-store')
    assert.match(((await res.json()) as { c_nonce: string }).c_nonce, /^[\w-]{43}$/)
  })

  it('issues a jwt_vc_json credential bound to a JWK through an independent wallet, with a transaction code', async () => {
    const holder = await jwkHolder()
    const client = wallet(new Map([[holder.publicJwk.x!, holder.privateKey]]))
    const { uri, txCode, value } = await offer(true)
    assert.match(txCode!, /^\d{6}$/)
    assert.deepEqual(value.grants[PRE_AUTH]!.tx_code, {
      input_mode: 'numeric',
      length: 6,
      description: 'The six-digit code shown on your svc account page',
    })
    // the transaction code travels beside the offer, never inside it
    const credentialOffer = await client.resolveCredentialOffer(uri)
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
    const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      txCode,
    })
    assert.equal(accessTokenResponse.token_type, 'Bearer')
    const { c_nonce } = await client.requestNonce({ issuerMetadata })
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: JWT_VC,
      signer: { method: 'jwk', publicJwk: holder.publicJwk as never, alg: 'ES256' },
      nonce: c_nonce,
    })
    const before = await issuedCount()
    const { credentialResponse } = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: JWT_VC,
      proofs: { jwt: [jwt] },
    })
    const issued = (credentialResponse.credentials![0] as { credential: string }).credential
    // any verifier: the issuer's did:key gives the key, jose checks the JWT
    const issuerKey = await importJWK(
      { kty: 'OKP', crv: 'Ed25519', x: b64uEncode(ed25519FromDidKey(issuerDid)) },
      'EdDSA',
    )
    const { payload, protectedHeader } = await jwtVerify(issued, issuerKey, { issuer: issuerDid })
    assert.equal(protectedHeader.kid, didKeyVerificationMethod(issuerDid))
    assert.equal(payload.sub, `urn:ietf:params:oauth:jwk-thumbprint:sha-256:${holder.jkt}`)
    assert.deepEqual((payload.cnf as { jwk: JWK }).jwk, {
      kty: 'EC',
      crv: 'P-256',
      x: holder.publicJwk.x,
      y: holder.publicJwk.y,
    })
    const vc = payload.vc as { type: string[]; credentialSubject: Record<string, unknown> }
    assert.deepEqual(vc.type, ['VerifiableCredential', 'SvcIdentityCredential'])
    assert.equal(vc.credentialSubject.email, DEMO_EMAIL)
    assert.match(vc.credentialSubject.did as string, /^did:key:z6Mk/)
    assert.ok(payload.exp! > payload.nbf!)
    assert.equal(await issuedCount(), before + 1)
  })

  it('issues an ldp_vc credential with an eddsa-jcs-2022 proof to a did:key holder, without a transaction code', async () => {
    const holder = await didKeyHolder()
    const client = wallet(new Map([[holder.kid, holder.privateKey]]))
    const { uri, txCode, value } = await offer(false)
    assert.equal(txCode, undefined)
    assert.equal(value.grants[PRE_AUTH]!.tx_code, undefined)
    const credentialOffer = await client.resolveCredentialOffer(uri)
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
    const { accessTokenResponse } = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
    })
    const { c_nonce } = await client.requestNonce({ issuerMetadata })
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: LDP_VC,
      signer: { method: 'did', didUrl: holder.kid, alg: 'EdDSA' },
      nonce: c_nonce,
    })
    const { credentialResponse } = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: accessTokenResponse.access_token,
      credentialConfigurationId: LDP_VC,
      proofs: { jwt: [jwt] },
    })
    const vc = (credentialResponse.credentials![0] as { credential: Record<string, unknown> }).credential
    const result = verifyEddsaJcs2022Proof(vc)
    assert.ok(result.verified, result.error)
    assert.equal(vc.issuer, issuerDid)
    assert.equal(
      (vc.proof as { verificationMethod: string }).verificationMethod,
      didKeyVerificationMethod(issuerDid),
    )
    const subject = vc.credentialSubject as Record<string, unknown>
    assert.equal(subject.id, holder.did)
    assert.equal(subject.email, DEMO_EMAIL)
  })

  /** Redeems an offer's code as a plain wallet would; returns the access token. */
  async function accessToken(withTxCode = false) {
    const { code, txCode } = await offer(withTxCode)
    const res = await token({
      grant_type: PRE_AUTH,
      'pre-authorized_code': code,
      ...(txCode ? { tx_code: txCode } : {}),
    })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('cache-control'), 'no-store')
    const body = (await res.json()) as { access_token: string; c_nonce: string; token_type: string }
    assert.equal(body.token_type, 'Bearer')
    assert.match(body.c_nonce, /^[\w-]{43}$/)
    return body.access_token
  }

  /** A key proof signed by `holder` (ES256, its JWK in the header) with any part overridden. */
  async function proof(
    holder: Awaited<ReturnType<typeof jwkHolder>>,
    payload: Record<string, unknown>,
    header: Record<string, unknown> = {},
    key: webcrypto.CryptoKey = holder.privateKey,
  ) {
    return new SignJWT({ aud: service.url, iat: Math.floor(Date.now() / 1000), ...payload })
      .setProtectedHeader({
        alg: 'ES256',
        typ: 'openid4vci-proof+jwt',
        jwk: holder.publicJwk,
        ...header,
      } as never)
      .sign(key)
  }

  const refused = async (res: Response, status: number, error: string) => {
    const body = (await res.json()) as { error: string; error_description: string }
    assert.equal(res.status, status, JSON.stringify(body))
    assert.equal(body.error, error, body.error_description)
    assert.equal(res.headers.get('cache-control'), 'no-store')
    return body
  }

  it('refuses a reused, expired or unknown pre-authorized code and a wrong transaction code with invalid_grant', async () => {
    const withCode = await offer(true)
    await refused(
      await token({ grant_type: PRE_AUTH, 'pre-authorized_code': withCode.code }),
      400,
      'invalid_request',
    )
    await refused(
      await token({
        grant_type: PRE_AUTH,
        'pre-authorized_code': withCode.code,
        tx_code: withCode.txCode === '000000' ? '111111' : '000000',
      }),
      400,
      'invalid_grant',
    )
    const ok = await token({
      grant_type: PRE_AUTH,
      'pre-authorized_code': withCode.code,
      tx_code: withCode.txCode!,
    })
    assert.equal(ok.status, 200)
    await refused(
      await token({ grant_type: PRE_AUTH, 'pre-authorized_code': withCode.code, tx_code: withCode.txCode! }),
      400,
      'invalid_grant',
    )
    const without = await offer(false)
    await refused(
      await token({ grant_type: PRE_AUTH, 'pre-authorized_code': without.code, tx_code: '123456' }),
      400,
      'invalid_request',
    )
    await refused(
      await token({ grant_type: PRE_AUTH, 'pre-authorized_code': 'not-a-code' }),
      400,
      'invalid_grant',
    )
    await refused(await token({ grant_type: PRE_AUTH }), 400, 'invalid_request')
    // client authentication is not how wallets redeem offers here
    await refused(
      await token({
        grant_type: PRE_AUTH,
        'pre-authorized_code': without.code,
        client_id: 'w',
        client_secret: 's',
      }),
      400,
      'invalid_request',
    )
    // five minutes later the offer has ended
    clockMs += 301_000
    try {
      await refused(
        await token({ grant_type: PRE_AUTH, 'pre-authorized_code': without.code }),
        400,
        'invalid_grant',
      )
    } finally {
      clockMs = Date.now()
    }
  })

  it('ends an offer after five wrong transaction codes', async () => {
    const { code, txCode } = await offer(true)
    const wrong = txCode === '999999' ? '999998' : '999999'
    for (let i = 1; i <= 5; i++) {
      const body = await refused(
        await token({ grant_type: PRE_AUTH, 'pre-authorized_code': code, tx_code: wrong }),
        400,
        'invalid_grant',
      )
      if (i === 5) assert.match(body.error_description, /ended/)
    }
    await refused(
      await token({ grant_type: PRE_AUTH, 'pre-authorized_code': code, tx_code: txCode! }),
      400,
      'invalid_grant',
    )
  })

  it('answers 401 invalid_token with a challenge without a credential access token, or with another token', async () => {
    const missing = await credential(undefined, { credential_configuration_id: JWT_VC })
    // RFC 6750 §3.1: no credential at all, no error code in the challenge
    assert.match(missing.headers.get('www-authenticate')!, /^Bearer realm="[^"]+", DPoP realm=/)
    assert.doesNotMatch(missing.headers.get('www-authenticate')!, /error=/)
    await refused(missing, 401, 'invalid_token')
    await refused(await credential('garbage', { credential_configuration_id: JWT_VC }), 401, 'invalid_token')
    // the token before the body: a malformed body without a token is still 401 (issue 16, finding 6)
    const unparsable = await fetch(`${service.url}/credential`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    })
    assert.match(unparsable.headers.get('www-authenticate')!, /^Bearer realm="[^"]+"/)
    await refused(unparsable, 401, 'invalid_token')
    await refused(await credential(undefined, { proofs: 'none', extra: 1 }), 401, 'invalid_token')
    // a client's own access token is for that client, not for the credential endpoint
    const created = await createClient(service, { redirect_uris: ['https://app.example.com/cb'] })
    const basic = Buffer.from(`${created.body.client_id}:${created.body.client_secret}`).toString('base64')
    const cc = await fetch(`${service.url}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: 'grant_type=client_credentials',
    })
    assert.equal(cc.status, 200)
    const other = ((await cc.json()) as { access_token: string }).access_token
    await refused(await credential(other, { credential_configuration_id: JWT_VC }), 401, 'invalid_token')
    // and a credential access token is good nowhere else
    const vciToken = await accessToken()
    const userinfo = await fetch(`${service.url}/userinfo`, {
      headers: { authorization: `Bearer ${vciToken}` },
    })
    assert.equal(userinfo.status, 401)
  })

  it('refuses bad requests and bad key proofs with the OpenID4VCI errors, and issues nothing', async () => {
    const at = await accessToken()
    const holder = await jwkHolder()
    const stranger = await jwkHolder()
    const c_nonce = await nonce()
    const before = await issuedCount()
    const good = (p = {}, h = {}) => proof(holder, { nonce: c_nonce, ...p }, h)
    const cases: Array<[string, unknown, string]> = [
      [
        'unknown configuration',
        { credential_configuration_id: 'Nope', proofs: { jwt: [await good()] } },
        'unknown_credential_configuration',
      ],
      ['no configuration', { proofs: { jwt: [await good()] } }, 'invalid_credential_request'],
      [
        'a credential identifier',
        { credential_identifier: 'x', proofs: { jwt: [await good()] } },
        'invalid_credential_request',
      ],
      [
        'the draft proof member',
        { credential_configuration_id: JWT_VC, proof: { proof_type: 'jwt', jwt: await good() } },
        'invalid_credential_request',
      ],
      ['no proofs', { credential_configuration_id: JWT_VC }, 'invalid_proof'],
      [
        'wrong typ',
        { credential_configuration_id: JWT_VC, proofs: { jwt: [await good({}, { typ: 'JWT' })] } },
        'invalid_proof',
      ],
      [
        'bad signature',
        {
          credential_configuration_id: JWT_VC,
          proofs: { jwt: [await proof(holder, { nonce: c_nonce }, {}, stranger.privateKey)] },
        },
        'invalid_proof',
      ],
      [
        'wrong aud',
        {
          credential_configuration_id: JWT_VC,
          proofs: { jwt: [await good({ aud: 'https://other.example' })] },
        },
        'invalid_proof',
      ],
      [
        'no nonce',
        { credential_configuration_id: JWT_VC, proofs: { jwt: [await proof(holder, {})] } },
        'invalid_proof',
      ],
      [
        'an old iat',
        {
          credential_configuration_id: JWT_VC,
          proofs: { jwt: [await good({ iat: Math.floor(Date.now() / 1000) - 3600 })] },
        },
        'invalid_proof',
      ],
      [
        'jwk and kid',
        {
          credential_configuration_id: JWT_VC,
          proofs: { jwt: [await good({}, { kid: 'did:key:z6Mk#z6Mk' })] },
        },
        'invalid_proof',
      ],
      [
        'an iss from an anonymous wallet',
        { credential_configuration_id: JWT_VC, proofs: { jwt: [await good({ iss: 'wallet' })] } },
        'invalid_proof',
      ],
      [
        'ldp_vc to a JWK',
        { credential_configuration_id: LDP_VC, proofs: { jwt: [await good()] } },
        'invalid_proof',
      ],
      [
        'two proofs by one key',
        { credential_configuration_id: JWT_VC, proofs: { jwt: [await good(), await good()] } },
        'invalid_proof',
      ],
      [
        'a nonce never issued',
        { credential_configuration_id: JWT_VC, proofs: { jwt: [await good({ nonce: 'stale' })] } },
        'invalid_nonce',
      ],
      [
        'encryption',
        {
          credential_configuration_id: JWT_VC,
          proofs: { jwt: [await good()] },
          credential_response_encryption: {},
        },
        'invalid_encryption_parameters',
      ],
    ]
    for (const [name, body, error] of cases) {
      const res = await credential(at, body)
      const answer = (await res.json()) as { error: string }
      assert.equal(res.status, 400, name)
      assert.equal(answer.error, error, name)
    }
    // malformed input is a 4XX, never a 500
    for (const [body, type] of [
      ['{"credential_configuration_id":', 'application/json'],
      ['[1, 2]', 'application/json'],
      ['"text"', 'application/json'],
      ['credential_configuration_id=x', 'application/x-www-form-urlencoded'],
    ]) {
      const res = await fetch(`${service.url}/credential`, {
        method: 'POST',
        headers: { 'content-type': type!, authorization: `Bearer ${at}` },
        body,
      })
      assert.ok(res.status >= 400 && res.status < 500, `${type} ${body}: ${res.status}`)
    }
    assert.equal((await fetch(`${service.url}/nonce`)).status, 405)
    assert.equal(await issuedCount(), before)
    // the refusals spent nothing: the same nonce still works, once
    const ok = await credential(at, { credential_configuration_id: JWT_VC, proofs: { jwt: [await good()] } })
    assert.equal(ok.status, 200)
    assert.equal(await issuedCount(), before + 1)
    await refused(
      await credential(at, { credential_configuration_id: JWT_VC, proofs: { jwt: [await good()] } }),
      400,
      'invalid_nonce',
    )
    assert.equal(await issuedCount(), before + 1)
  })

  it('issues one credential per key in a batch, all proofs sharing one nonce', async () => {
    const at = await accessToken()
    const [a, b] = [await jwkHolder(), await jwkHolder()]
    const c_nonce = await nonce()
    const res = await credential(at, {
      credential_configuration_id: JWT_VC,
      proofs: { jwt: [await proof(a, { nonce: c_nonce }), await proof(b, { nonce: c_nonce })] },
    })
    assert.equal(res.status, 200)
    const { credentials } = (await res.json()) as { credentials: Array<{ credential: string }> }
    assert.equal(credentials.length, 2)
    const other = await nonce()
    await refused(
      await credential(at, {
        credential_configuration_id: JWT_VC,
        proofs: { jwt: [await proof(a, { nonce: other }), await proof(b, { nonce: await nonce() })] },
      }),
      400,
      'invalid_proof',
    )
  })

  it('binds the access token to a DPoP key when the wallet sends a proof, and then asks for it', async () => {
    const holder = await didKeyHolder()
    const dpop = await jwkHolder()
    const client = wallet(
      new Map<string, webcrypto.CryptoKey>([
        [holder.kid, holder.privateKey],
        [dpop.publicJwk.x!, dpop.privateKey],
      ]),
    )
    const credentialOffer = await client.resolveCredentialOffer((await offer(false)).uri)
    const issuerMetadata = await client.resolveIssuerMetadata(credentialOffer.credential_issuer)
    const signer = { method: 'jwk' as const, publicJwk: dpop.publicJwk as never, alg: 'ES256' }
    const granted = await client.retrievePreAuthorizedCodeAccessTokenFromOffer({
      credentialOffer,
      issuerMetadata,
      dpop: { signer },
    })
    assert.equal(granted.accessTokenResponse.token_type, 'DPoP')
    const { c_nonce } = await client.requestNonce({ issuerMetadata })
    const { jwt } = await client.createCredentialRequestJwtProof({
      issuerMetadata,
      credentialConfigurationId: JWT_VC,
      signer: { method: 'did', didUrl: holder.kid, alg: 'EdDSA' },
      nonce: c_nonce,
    })
    // without its proof of possession the token is refused
    await refused(
      await credential(granted.accessTokenResponse.access_token, {
        credential_configuration_id: JWT_VC,
        proofs: { jwt: [jwt] },
      }),
      401,
      'invalid_token',
    )
    const { credentialResponse } = await client.retrieveCredentials({
      issuerMetadata,
      accessToken: granted.accessTokenResponse.access_token,
      credentialConfigurationId: JWT_VC,
      proofs: { jwt: [jwt] },
      // without the nonce: the wallet learns it from the 401's DPoP challenge and retries (RFC 9449 §9)
      dpop: { signer },
    })
    const issued = (credentialResponse.credentials![0] as { credential: string }).credential
    const issuerKey = await importJWK(
      { kty: 'OKP', crv: 'Ed25519', x: b64uEncode(ed25519FromDidKey(issuerDid)) },
      'EdDSA',
    )
    const { payload } = await jwtVerify(issued, issuerKey, { issuer: issuerDid })
    assert.equal(payload.sub, holder.did)
    assert.equal(payload.cnf, undefined)
  })
})
