import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConfigError } from '@svc/kit'
import { tempFolder } from '@svc/kit/testing'
import { readRentalConfig } from '../../src/config.ts'

const common = (nodeEnv: string) =>
  ({ nodeEnv, dataDir: tempFolder() }) as unknown as Parameters<typeof readRentalConfig>[1]
const productionEnv = {
  RENTAL_IDP_ADMIN_TOKEN: 'a'.repeat(32),
  RENTAL_LEDGER_TOKEN: 'b'.repeat(32),
  RENTAL_ENCRYPTION_KEY: 'c'.repeat(43),
}

describe('rental configuration: RENTAL_OPERATORS', () => {
  it('is the demo user outside production, nobody in production, and the listed subjects or emails when set', () => {
    assert.deepEqual(readRentalConfig({}, common('development')).operators, ['demo@svc.local'])
    assert.deepEqual(readRentalConfig(productionEnv, common('production')).operators, [])
    assert.deepEqual(
      readRentalConfig(
        { ...productionEnv, RENTAL_OPERATORS: ' usr_abc , ops@example.com,, ' },
        common('production'),
      ).operators,
      ['usr_abc', 'ops@example.com'],
    )
    // an empty variable is an unset one (as every variable of the kit's readEnv)
    assert.deepEqual(readRentalConfig({ RENTAL_OPERATORS: '' }, common('development')).operators, [
      'demo@svc.local',
    ])
    assert.deepEqual(readRentalConfig({ RENTAL_OPERATORS: ' , ' }, common('development')).operators, [])
  })

  it('refuses an entry that is not a subject or an email', () => {
    assert.throws(
      () => readRentalConfig({ RENTAL_OPERATORS: 'ops@example.com, two words' }, common('development')),
      ConfigError,
    )
  })
})
