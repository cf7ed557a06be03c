import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { documentPath, generate, SPECS } from './openapi.ts'

describe('docs/openapi', () => {
  for (const spec of SPECS)
    it(`holds the current OpenAPI document of ${spec.name} (run npm run openapi after changing a route)`, async () => {
      const current = await generate(spec)
      assert.equal(readFileSync(documentPath(spec.name), 'utf8'), current)
    })
})
