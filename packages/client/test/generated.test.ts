import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { generateTypes, SDK_TYPED, typesPath } from '../../../scripts/openapi.ts'

describe('packages/client/src/generated', () => {
  for (const name of SDK_TYPED)
    it(`holds the SDK's types of ${name}, current with docs/openapi/${name}.json (run npm run openapi)`, async () => {
      assert.equal(readFileSync(typesPath(name), 'utf8'), await generateTypes(name))
    })
})
