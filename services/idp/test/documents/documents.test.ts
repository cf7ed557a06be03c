import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { type RunningService, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { b64uDecode } from '@svc/trust/base64url'
import { verifyEddsaJcs2022Proof } from '@svc/trust/data-integrity'
import { ed25519FromDidKey } from '@svc/trust/did-key'
import { verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes, canonicalize } from '@svc/trust/jcs'
import { verifyMlDsa65 } from '@svc/trust/mldsa'
import { idp } from '../../src/app.ts'
import type { IdpConfig } from '../../src/config.ts'

const SOVEREIGNTY = {
  hosting_region: 'eu-west-1',
  jurisdiction: 'Ireland (EU)',
  sub_processors: [{ name: 'Mail relay', purpose: 'sending email', region: 'eu-west-1' }],
  last_residency_claim: { region: 'eu-west-1', checked_at: '2026-11-20T09:00:00Z' },
  transfer_verdict: 'no transfers outside the EU',
}

describe('operating documents, each signed by the issuer’s did:key', () => {
  let service: RunningService<IdpConfig>
  let did: string

  before(async () => {
    service = await startService(
      idp,
      testEnv({
        IDP_SOVEREIGNTY: JSON.stringify(SOVEREIGNTY),
        SVC_BUILD_COMMIT: 'abc1234',
        SVC_BUILD_TIME: '2026-11-23T10:00:00Z',
      }),
      { fresh: true },
    )
    did = (await request(`${service.url}/.well-known/svc-issuer.json`)).body.did as string
  })
  after(async () => service.close())

  /** What any verifier does: check the eddsa-jcs-2022 proof against the issuer's did:key. */
  const verified = async (path: string) => {
    const res = await request(`${service.url}${path}`)
    assert.equal(res.status, 200, path)
    const document = res.body
    const result = verifyEddsaJcs2022Proof(document)
    assert.ok(result.verified, `${path}: ${result.error}`)
    assert.ok((document.proof as { verificationMethod: string }).verificationMethod.startsWith(`${did}#`))
    return document
  }

  it('names the issuer’s ledger DID, the one its receipts are signed with', async () => {
    const issuer = await verified('/.well-known/svc-issuer.json')
    assert.match(did, /^did:key:z6Mk/)
    assert.equal(issuer.issuer, service.url)
    assert.equal(
      (issuer.documents as Record<string, string>).constitution,
      `${service.url}/.well-known/svc-constitution.json`,
    )
    // a tampered copy no longer verifies
    assert.equal(verifyEddsaJcs2022Proof({ ...issuer, ledger: 'https://evil.example.com' }).verified, false)
  })

  it('publishes the constitution under its hash, by the full hash or its first 16 hex', async () => {
    const current = await verified('/.well-known/svc-constitution.json')
    const rules = JSON.parse(
      readFileSync(new URL('../../constitution.json', import.meta.url), 'utf8'),
    ) as object
    const hash = `sha256:${createHash('sha256').update(canonicalize(rules)).digest('hex')}`
    assert.equal(current.hash, hash)
    assert.deepEqual(current.rules, rules)
    assert.deepEqual((await verified(`/.well-known/svc-constitution/${hash}.json`)).rules, rules)
    assert.deepEqual((await verified(`/.well-known/svc-constitution/${hash.slice(7, 23)}.json`)).hash, hash)
    assert.equal(
      (await request(`${service.url}/.well-known/svc-constitution/${'0'.repeat(16)}.json`)).status,
      404,
    )
    assert.equal((await request(`${service.url}/.well-known/svc-constitution/nope.json`)).status, 400)
  })

  it('attests the build: the commit and the lockfile’s hash', async () => {
    const build = await verified('/.well-known/svc-build.json')
    assert.equal(build.commit, 'abc1234')
    const lockfile = readFileSync(new URL('../../../../package-lock.json', import.meta.url))
    assert.equal(build.lockfile, `sha256:${createHash('sha256').update(lockfile).digest('hex')}`)
    assert.equal(build.built_at, '2026-11-23T10:00:00Z')
    assert.equal(build.built_at_source, 'build')
  })

  it('declares sovereignty from configuration', async () => {
    const sovereignty = await verified('/.well-known/svc-sovereignty.json')
    const { proof: _proof, type: _type, issuer: _issuer, ...declared } = sovereignty
    assert.deepEqual(declared, SOVEREIGNTY)
  })

  it('binds the Ed25519 did:key and an ML-DSA-65 key, each signing the other', async () => {
    const pq = (await request(`${service.url}/.well-known/svc-pq.json`)).body
    const {
      ed25519_signature,
      ml_dsa_65_signature,
      signed_bytes: _note,
      ...statement
    } = pq as Record<string, string>
    assert.equal(statement.did, did)
    const ed25519 = ed25519FromDidKey(did)
    assert.deepEqual(b64uDecode(statement.ed25519_public_key!), ed25519)
    const bytes = canonicalBytes(statement)
    assert.ok(verifyEd25519(ed25519, bytes, b64uDecode(ed25519_signature!)))
    const context = new TextEncoder().encode('svc-pq-binding-v1')
    const mldsa = b64uDecode(statement.ml_dsa_65_public_key!)
    assert.ok(verifyMlDsa65(mldsa, bytes, b64uDecode(ml_dsa_65_signature!), context))
    assert.equal(
      verifyMlDsa65(
        mldsa,
        canonicalBytes({ ...statement, did: 'did:key:z6MkOther' }),
        b64uDecode(ml_dsa_65_signature!),
        context,
      ),
      false,
    )
    // the key is the same on every fetch (its signatures are hedged, so they differ)
    const again = (await request(`${service.url}/.well-known/svc-pq.json`)).body
    assert.equal(again.ml_dsa_65_public_key, statement.ml_dsa_65_public_key)
  })
})
