import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type RunningService, repoRoot, startService } from '@svc/kit'
import { request, tempFolder, testEnv } from '@svc/kit/testing'
import { ledger } from '../../src/app.ts'
import type { LedgerConfig } from '../../src/config.ts'
import { append, newIssuer, signedReceipt, writerEnv } from '../support/helpers.ts'

/** `npm run verify -- FILE [--log-key KEY]`, offline: the ledger is not consulted. */
function verify(bundle: unknown, ...args: string[]) {
  const file = join(tempFolder(), 'bundle.json')
  writeFileSync(file, JSON.stringify(bundle))
  const run = spawnSync('npm', ['run', '--silent', 'verify', '--', file, ...args], {
    cwd: repoRoot(),
    encoding: 'utf8',
  })
  return { code: run.status, out: run.stdout + run.stderr }
}

describe('offline verification of a receipt bundle', () => {
  let service: RunningService<LedgerConfig>
  let bundle: Record<string, unknown>
  let logKey: string
  before(async () => {
    service = await startService(ledger, testEnv(writerEnv), { fresh: true })
    const issuer = newIssuer()
    for (let i = 0; i < 5; i++) await append(service.url, signedReceipt(issuer, `tsk_${i}`))
    bundle = (await request(`${service.url}/v1/entries/3/bundle`)).body
    logKey = (await request(`${service.url}/v1/key`)).body.verifier_key as string
  })
  after(async () => service.close())

  it('verifies a bundle with the log key pinned, with no network', async () => {
    await service.close()
    const { code, out } = verify(bundle, '--log-key', logKey)
    assert.equal(code, 0, out)
    assert.match(out, /ok +receipt signature/)
    assert.match(out, /ok +inclusion proof: index 3 of 5/)
    assert.match(out, /VERIFIED/)
  })

  it('fails a tampered receipt, a wrong proof and another log key', async () => {
    const receipt = bundle.receipt as Record<string, unknown>
    const tampered = verify({ ...bundle, receipt: { ...receipt, subject: 'tsk_other' } }, '--log-key', logKey)
    assert.equal(tampered.code, 1)
    assert.match(tampered.out, /FAIL receipt signature/)
    const proof = bundle.inclusion_proof as string[]
    const wrongProof = verify({ ...bundle, inclusion_proof: [...proof].reverse() }, '--log-key', logKey)
    assert.equal(wrongProof.code, 1)
    assert.match(wrongProof.out, /FAIL inclusion proof/)
    const otherKey = verify(bundle, '--log-key', logKey.replace(/\+[0-9a-f]{8}\+/, '+00000000+'))
    assert.equal(otherKey.code, 1)
    assert.match(otherKey.out, /FAIL log key/)
    assert.equal(verify(bundle, '--log-key').code, 2, 'a usage error')
  })
})
