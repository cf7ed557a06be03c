import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Type } from 'typebox'
import { commonEnv, devSecret, Port, readEnv } from './config.ts'
import { ConfigError } from './errors.ts'
import { startService } from './service.ts'
import { readTopology } from './topology.ts'

describe('configuration', () => {
  it('converts and validates variables, with defaults left to the caller', () => {
    const env = readEnv(
      { ...commonEnv, PORT: Type.Optional(Port) },
      { PORT: '8080', LOG_LEVEL: 'warn', UNRELATED: 'x' },
    )
    assert.deepEqual(env, { PORT: 8080, LOG_LEVEL: 'warn' })
  })

  it('reports every wrong value at once, by name', () => {
    assert.throws(
      () =>
        readEnv(
          { ...commonEnv, PORT: Type.Optional(Port) },
          { PORT: 'eighty', DATABASE_URL: 'mysql://localhost/x', LOG_LEVEL: 'loud' },
        ),
      (err: Error) => {
        assert.ok(err instanceof ConfigError)
        for (const name of ['PORT="eighty"', 'DATABASE_URL="mysql://localhost/x"', 'LOG_LEVEL="loud"'])
          assert.ok(err.message.includes(name), `${name} in ${err.message}`)
        return true
      },
    )
  })

  it('reads the topology with defaults on 127.0.0.1 and overrides', () => {
    const topology = readTopology({ RENTAL_PORT: '5200', IDP_URL: 'https://id.example.com/' })
    assert.deepEqual(topology.rental, { port: 5200, url: 'http://127.0.0.1:5200' })
    assert.deepEqual(topology.idp, { port: 4000, url: 'https://id.example.com' })
    assert.deepEqual(topology.agents, { port: 4300, url: 'http://127.0.0.1:4300' })
    assert.throws(() => readTopology({ LEDGER_URL: 'ftp://x' }), /LEDGER_URL="ftp:\/\/x"/)
    assert.throws(() => readTopology({ AGENTS_PORT: '70000' }), /AGENTS_PORT="70000"/)
  })

  it('generates a development secret but refuses a missing one in production', () => {
    assert.equal(devSecret('TOKEN', 'given-secret', 'production'), 'given-secret')
    assert.match(devSecret('TOKEN', undefined, 'development'), /^[A-Za-z0-9_-]{32}$/)
    assert.throws(
      () => devSecret('TOKEN', undefined, 'production'),
      /TOKEN must be set when NODE_ENV=production/,
    )
  })

  it('refuses to start a service with a database on the embedded defaults in production', async () => {
    const spec = {
      name: 'ledger' as const,
      version: '1',
      description: 'x',
      migrations: '/nonexistent',
      errorShape: 'api' as const,
      readConfig: () => ({}),
      async build() {},
    }
    await assert.rejects(
      startService(spec, { NODE_ENV: 'production', LOG_LEVEL: 'silent' }, { fresh: true }),
      /DATABASE_URL must be set when NODE_ENV=production/,
    )
    await assert.rejects(
      startService(
        spec,
        { NODE_ENV: 'production', DATABASE_URL: 'postgres://x/y', LOG_LEVEL: 'silent' },
        { fresh: true },
      ),
      /REDIS_URL must be set when NODE_ENV=production/,
    )
  })
})
