import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { type RunningService, Sealer, startService } from '@svc/kit'
import { request, testEnv } from '@svc/kit/testing'
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from 'jose'
import type { Kysely } from 'kysely'
import { idp } from '../../src/app.ts'
import { PREPUBLISH_MS, SigningKeys } from '../../src/areas/keys/service.ts'
import type { IdpConfig } from '../../src/config.ts'
import type { IdpTables } from '../../src/db.ts'

const ADMIN = 'test-admin-token-0123456789'
const admin = { 'x-admin-token': ADMIN }

describe('idp signing keys and JWKS', () => {
  let service: RunningService<IdpConfig>
  let db: Kysely<IdpTables>
  const keysAt = (offsetMs: number) =>
    new SigningKeys(
      db,
      new Sealer(service.ctx.config.encryptionKey),
      { rotationDays: 90, retentionHours: 24 },
      () => new Date(Date.now() + offsetMs),
    )

  before(async () => {
    service = await startService(idp, testEnv({ IDP_ADMIN_TOKEN: ADMIN }), { fresh: true })
    db = service.ctx.database!.db as Kysely<IdpTables>
  })
  after(async () => service.close())

  it('publishes one public key per algorithm, cacheable for 300 s, with no private members', async () => {
    const res = await fetch(`${service.url}/.well-known/jwks.json`)
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('cache-control'), 'public, max-age=300')
    const { keys } = (await res.json()) as { keys: Array<Record<string, string>> }
    assert.deepEqual(keys.map((k) => k.alg).sort(), ['ES256', 'EdDSA', 'RS256'])
    for (const key of keys) {
      assert.equal(key.use, 'sig')
      assert.ok(key.kid)
      for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi'])
        assert.equal(key[secret], undefined, `${key.alg} has no ${secret}`)
    }
  })

  it('signs tokens that a standard verifier accepts through the JWKS, for each algorithm', async () => {
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`))
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const token = await keysAt(0).sign({ sub: 'user-1', iss: service.url }, alg)
      const { payload, protectedHeader } = await jwtVerify(token, jwks, { issuer: service.url })
      assert.equal(payload.sub, 'user-1')
      assert.equal(protectedHeader.alg, alg)
    }
  })

  it('keeps private keys sealed at rest', async () => {
    const rows = await db.selectFrom('signing_keys').select(['kid', 'private_key_enc']).execute()
    assert.ok(rows.length >= 3)
    for (const row of rows) {
      assert.ok(!row.private_key_enc.includes(Buffer.from('"d"')), 'no JWK text in the stored bytes')
      assert.throws(() => new Sealer(randomBytes(32)).open(row.private_key_enc, `signing-key:${row.kid}`))
      const opened = JSON.parse(
        new Sealer(service.ctx.config.encryptionKey)
          .open(row.private_key_enc, `signing-key:${row.kid}`)
          .toString(),
      )
      assert.ok(opened.d, 'the sealed value is the private JWK')
    }
  })

  it('rotates by publishing the successor first, then retires the old key after its retention', async () => {
    const before = (await keysAt(0).jwks()).keys.filter((k) => k.alg === 'RS256')
    const rotated = await request(`${service.url}/manage/v1/keys/rotate`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ alg: 'RS256' }),
    })
    assert.equal(rotated.status, 200)
    const successor = (rotated.body.rotated as Array<{ kid: string }>)[0]!.kid
    const published = (await keysAt(0).jwks()).keys.filter((k) => k.alg === 'RS256').map((k) => k.kid)
    assert.ok(published.includes(successor), 'the successor is published at once')
    assert.ok(published.includes(before[0]!.kid), 'the current key still published')

    const now = await keysAt(0).sign({ sub: 'x' })
    assert.notEqual(
      JSON.parse(Buffer.from(now.split('.')[0]!, 'base64url').toString()).kid,
      successor,
      'the old key signs until the successor activates',
    )
    const later = await keysAt(PREPUBLISH_MS + 1000).sign({ sub: 'x' })
    assert.equal(JSON.parse(Buffer.from(later.split('.')[0]!, 'base64url').toString()).kid, successor)
    const jwks = createLocalJWKSet(await keysAt(PREPUBLISH_MS + 1000).jwks())
    await jwtVerify(now, jwks)
    await jwtVerify(later, jwks)

    const expired = (await keysAt(PREPUBLISH_MS + 25 * 3600_000).jwks()).keys.map((k) => k.kid)
    assert.ok(!expired.includes(before[0]!.kid), 'the retired key leaves the JWKS after its retention')
    assert.ok(expired.includes(successor))
  })

  it('rotates immediately on demand and lists key states for admins only', async () => {
    const res = await request(`${service.url}/manage/v1/keys/rotate`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ alg: 'ES256', immediate: true }),
    })
    const successor = (res.body.rotated as Array<{ kid: string }>)[0]!.kid
    const token = await keysAt(0).sign({ sub: 'x' }, 'ES256')
    assert.equal(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()).kid, successor)
    const list = await request(`${service.url}/manage/v1/keys`, { headers: admin })
    const es = (list.body.keys as Array<{ kid: string; alg: string; state: string }>).filter(
      (k) => k.alg === 'ES256',
    )
    assert.deepEqual(es.map((k) => k.state).sort(), ['active', 'retired'])
    assert.equal((await request(`${service.url}/manage/v1/keys`)).status, 401)
    const wrong = await request(`${service.url}/manage/v1/keys/rotate`, {
      method: 'POST',
      headers: { 'x-admin-token': 'nope' },
    })
    assert.equal(wrong.status, 401)
    assert.equal(wrong.body.error, 'invalid_token')
    const bad = await request(`${service.url}/manage/v1/keys/rotate`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ alg: 'HS256' }),
    })
    assert.equal(bad.status, 400)
    assert.equal(bad.body.error, 'invalid_request')
    const all = await request(`${service.url}/manage/v1/keys/rotate`, { method: 'POST', headers: admin })
    assert.equal(all.status, 200)
    assert.deepEqual((all.body.rotated as Array<{ alg: string }>).map((k) => k.alg).sort(), [
      'ES256',
      'EdDSA',
      'RS256',
    ])
  })

  it('rotates on schedule once a key is older than the rotation period', async () => {
    const late = new SigningKeys(
      db,
      new Sealer(service.ctx.config.encryptionKey),
      { rotationDays: 90, retentionHours: 24 },
      () => new Date(Date.now() + 91 * 86_400_000),
    )
    const before = (await late.list())
      .filter((k) => k.alg === 'EdDSA' && k.state === 'active')
      .map((k) => k.kid)
    await late.rotateIfDue()
    const after = await late.list()
    assert.ok(
      after.some((k) => k.alg === 'EdDSA' && k.state === 'pending'),
      'a successor is pending',
    )
    await late.rotateIfDue()
    assert.equal(
      (await late.list()).filter((k) => k.alg === 'EdDSA' && k.state === 'pending').length,
      1,
      'no second successor',
    )
    assert.ok(before.length === 1)
  })
})
