import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError } from '@svc/kit'
import { generateCosignerKey } from '@svc/trust/cosignature'
import { generateNoteKey } from '@svc/trust/note'
import { readLedgerConfig } from '../../src/config.ts'

const common = { nodeEnv: 'development' } as Parameters<typeof readLedgerConfig>[1]
const production = { nodeEnv: 'production' } as Parameters<typeof readLedgerConfig>[1]

describe('ledger configuration', () => {
  it('defaults the origin to the public URL’s host and port, and reads writers and witnesses', () => {
    const witness = generateCosignerKey('w.example')
    const other = generateCosignerKey('witness.example/w2')
    const config = readLedgerConfig(
      {
        LEDGER_URL: 'https://ledger.example.com/',
        LEDGER_WRITERS: 'idp:aaaaaaaaaaaaaaaa',
        LEDGER_WITNESSES: `${witness.verifierKey}, ${other.verifierKey} https://witness.example/w2/`,
      },
      common,
    )
    assert.equal(config.origin, 'ledger.example.com')
    assert.deepEqual(
      config.writers.map((w) => w.name),
      ['idp'],
    )
    assert.deepEqual(config.witnesses, [
      { verifierKey: witness.verifierKey },
      { verifierKey: other.verifierKey, prefix: 'https://witness.example/w2' },
    ])
    assert.equal(config.discoverWitness, undefined)
  })

  it('in development without witnesses, finds the idp’s; in tests and production, none', () => {
    assert.equal(
      readLedgerConfig({ IDP_URL: 'http://127.0.0.1:4999' }, common).discoverWitness,
      'http://127.0.0.1:4999',
    )
    const test = { nodeEnv: 'test' } as Parameters<typeof readLedgerConfig>[1]
    assert.equal(readLedgerConfig({}, test).discoverWitness, undefined)
  })

  it('refuses a witness entry with a submission prefix that is not a URL, or with more parts', () => {
    const witness = generateCosignerKey('w.example')
    for (const entry of [`${witness.verifierKey} ftp://x`, `${witness.verifierKey} https://a https://b`])
      assert.throws(() => readLedgerConfig({ LEDGER_WITNESSES: entry }, common), ConfigError)
  })

  it('refuses a witness key that is not a cosignature verifier key, at boot', () => {
    const logKey = generateNoteKey('w.example').verifierKey
    assert.throws(
      () => readLedgerConfig({ LEDGER_WITNESSES: logKey }, common),
      (err: Error) => {
        assert.ok(err instanceof ConfigError)
        assert.match(err.message, /LEDGER_WITNESSES/)
        return true
      },
    )
    assert.throws(() => readLedgerConfig({ LEDGER_WRITERS: 'idp:short' }, common), /LEDGER_WRITERS/)
  })

  it('requires its keys, writers and origin in production', () => {
    for (const missing of ['LEDGER_SIGNING_KEY', 'LEDGER_WRITERS', 'LEDGER_WEBHOOK_KEY', 'LEDGER_ORIGIN']) {
      const env: Record<string, string> = {
        LEDGER_SIGNING_KEY: generateNoteKey('ledger.example.com').signerKey,
        LEDGER_WRITERS: 'idp:aaaaaaaaaaaaaaaa',
        LEDGER_WEBHOOK_KEY: 'k'.repeat(32),
        LEDGER_ORIGIN: 'ledger.example.com',
      }
      delete env[missing]
      assert.throws(() => readLedgerConfig(env, production), new RegExp(`${missing} must be set`))
    }
  })
})
