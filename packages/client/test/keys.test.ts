import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { ed25519FromSeed, verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { b64uDecode } from '@svc/trust/base64url'
import { BACKUP_FORMAT, bodyHash, ClientKey, signBody, SvcError } from '../src/index.ts'

const PASSPHRASE = 'a long passphrase kept apart'

async function code(call: Promise<unknown>) {
  const err = await call.then(
    () => assert.fail('did not throw'),
    (e: unknown) => e,
  )
  assert.ok(err instanceof SvcError, String(err))
  return err.code
}

describe('the client key (WebCrypto Ed25519) and what it signs', () => {
  it('is the did:key of its seed, as @svc/trust makes it, and signs the JCS bytes of a handed body', async () => {
    const seed = new Uint8Array(32).fill(7)
    const key = await ClientKey.fromSeed(seed)
    const pair = ed25519FromSeed(seed)
    assert.deepEqual(key.publicKey, pair.publicKey)
    assert.equal(key.did, didKeyFromEd25519(pair.publicKey))
    // key order and spacing as the rental sent them do not matter: the JCS bytes are signed
    const body = JSON.parse('{"v": 1, "type": "svc.escrow", "amount_fils": 1500}') as Record<string, unknown>
    const handed = { body, hash: await bodyHash(body) }
    assert.equal(handed.hash, 'sha256:' + (await sha256Hex(canonicalBytes(body))))
    const signature = await signBody(key, handed)
    assert.ok(verifyEd25519(pair.publicKey, canonicalBytes(body), b64uDecode(signature)))
    // a body that is not the one its hash names is refused, unsigned
    assert.equal(
      await code(signBody(key, { body: { ...body, amount_fils: 1 }, hash: handed.hash })),
      'hash_mismatch',
    )
  })

  it('backs up under a passphrase in the console’s file format and restores the same key', async () => {
    const key = await ClientKey.generate()
    const file = await key.backup(PASSPHRASE)
    const backup = JSON.parse(file) as Record<string, unknown>
    assert.equal(backup.format, BACKUP_FORMAT)
    assert.equal(backup.did, key.did)
    assert.deepEqual(Object.keys(backup).sort(), [
      'cipher',
      'ciphertext',
      'created_at',
      'did',
      'format',
      'kdf',
    ])
    assert.ok(!file.includes(PASSPHRASE))
    const restored = await ClientKey.restore(file, PASSPHRASE)
    assert.equal(restored.did, key.did)
    const message = new TextEncoder().encode('restored')
    assert.ok(verifyEd25519(key.publicKey, message, await restored.sign(message)))

    assert.equal(await code(ClientKey.restore(file, 'not the passphrase at all')), 'backup_passphrase')
    assert.equal(await code(key.backup('short')), 'passphrase_short')
    assert.equal(await code(ClientKey.restore('{}', PASSPHRASE)), 'backup_invalid')
    // the did:key is the associated data: a backup relabelled to another key does not open
    const other = await ClientKey.generate()
    const relabelled = JSON.stringify({ ...backup, did: other.did })
    assert.equal(await code(ClientKey.restore(relabelled, PASSPHRASE)), 'backup_passphrase')
  })
})

async function sha256Hex(bytes: Uint8Array) {
  return Buffer.from(await crypto.subtle.digest('SHA-256', bytes)).toString('hex')
}
