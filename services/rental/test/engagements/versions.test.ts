import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { b64uEncode } from '@svc/trust/base64url'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'

const code = (res: Answer) => (res.body.error as { code?: string } | undefined)?.code
const message = (res: Answer) => (res.body.error as { message?: string } | undefined)?.message ?? ''
const CARD_1 = `sha256:${'1'.repeat(64)}`
const CARD_2 = `sha256:${'2'.repeat(64)}`

interface EngagementVersion {
  version: string | null
  card_hash: string | null
  pending: null | {
    version: string
    card_hash: string
    addendum: { body: Record<string, unknown>; hash: string }
  }
  addenda: Array<{ from_version: string | null; to_version: string; receipt_id: string }>
}

describe('agent versions: released by the provider, accepted by a signed addendum, tasks go to them', () => {
  let stack: FullStack
  let did = ''
  let early = '' // hired before any release: the initial version
  let earlyKey: Ed25519KeyPair
  let later = '' // hired after 1.0.0
  let laterKey: Ed25519KeyPair
  const sign = (key: Ed25519KeyPair, body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const release = (who: FullStack['alice'], body: Record<string, unknown>) =>
    stack.call(who, 'POST', `/api/agents/${encodeURIComponent(did)}/versions`, body)
  const versionOf = async (id: string) => {
    const res = await stack.call(stack.alice, 'GET', `/api/engagements/${id}/version`)
    assert.equal(res.status, 200, res.text)
    return res.body as unknown as EngagementVersion
  }
  const accept = (id: string, body: unknown) =>
    stack.call(stack.alice, 'POST', `/api/engagements/${id}/version/accept`, body)

  before(async () => {
    // bob (the demo user as another client) is the operator: he acts for the platform, which provides the built-in agents
    stack = await startFullStack({ RENTAL_OPERATORS: 'another-client' })
    did = await stack.agentOf('job_summary')
    earlyKey = stack.newClientKey()
    early = await stack.hireAndSign(stack.alice, 'job_summary', did, earlyKey)
  })
  after(async () => stack?.close())

  it('a version is released by the agent’s provider only (an operator for the platform’s), SemVer above the latest', async () => {
    const refused = await release(stack.alice, { version: '1.0.0', changelog: 'First.', card_hash: CARD_1 })
    assert.equal(refused.status, 403, refused.text)
    assert.equal(code(refused), 'forbidden')
    const first = await release(stack.bob, {
      version: '1.0.0',
      changelog: 'First release.',
      card_hash: CARD_1,
    })
    assert.equal(first.status, 200, first.text)
    assert.equal(first.body.provider_org_id, 'org_platform')
    assert.equal(first.body.version, '1.0.0')
    for (const version of ['1.0', '01.0.0', '1.0.0-', 'v1.0.0', '1.0.0+build+x'])
      assert.equal(
        (await release(stack.bob, { version: version.padEnd(5, ' '), changelog: 'x', card_hash: CARD_1 }))
          .status,
        400,
        version,
      )
    assert.equal(
      (await release(stack.bob, { version: '1.0.0', changelog: 'x', card_hash: 'md5:1' })).status,
      400,
    )
    assert.equal(
      (await release(stack.bob, { version: '1.1.0', changelog: 'x'.repeat(5001), card_hash: CARD_1 })).status,
      400,
    )
    assert.equal(
      (await release(stack.bob, { version: '1.1.0', changelog: '   ', card_hash: CARD_1 })).status,
      400,
    )
    assert.equal(
      (await release(stack.bob, { version: '1.1.0', changelog: 'x', card_hash: CARD_1, extra: 1 })).status,
      400,
    )
    const again = await release(stack.bob, { version: '1.0.0', changelog: 'Again.', card_hash: CARD_1 })
    assert.deepEqual([again.status, code(again)], [409, 'version_conflict'])
    assert.match(message(again), /released already/)
    for (const lower of ['0.9.9', '1.0.0-rc.1', '1.0.0+build.7']) {
      const res = await release(stack.bob, { version: lower, changelog: 'Lower.', card_hash: CARD_1 })
      assert.deepEqual([res.status, code(res)], [409, 'version_conflict'], lower)
      assert.match(message(res), /latest version is 1\.0\.0/)
    }
  })

  it('an engagement stays on its version at hire; a newer one shows as pending with its addendum', async () => {
    laterKey = stack.newClientKey()
    later = await stack.hireAndSign(stack.alice, 'job_summary', did, laterKey)
    const onFirst = await versionOf(later)
    assert.equal(onFirst.version, '1.0.0')
    assert.equal(onFirst.card_hash, CARD_1)
    assert.equal(onFirst.pending, null)
    const nothing = await accept(later, { addendum_hash: CARD_1, signature: 'AAAA' })
    assert.deepEqual([nothing.status, code(nothing)], [409, 'version_not_pending'])
    assert.match(message(nothing), /on 1\.0\.0, the agent's latest/)
    const initial = await versionOf(early)
    assert.equal(initial.version, null)
    assert.equal(initial.pending?.version, '1.0.0')
    const second = await release(stack.bob, {
      version: '1.1.0',
      changelog: 'Shorter summaries.',
      card_hash: CARD_2,
    })
    assert.equal(second.status, 200, second.text)
    const pending = (await versionOf(later)).pending!
    assert.equal(pending.version, '1.1.0')
    assert.equal(pending.card_hash, CARD_2)
    assert.deepEqual(
      { ...pending.addendum.body, issued: undefined },
      {
        type: 'svc.addendum',
        v: 1,
        engagement_id: later,
        sla_hash: pending.addendum.body.sla_hash,
        agent_did: did,
        client_did: pending.addendum.body.client_did,
        provider_did: pending.addendum.body.provider_did,
        from_version: '1.0.0',
        to_version: '1.1.0',
        card_hash: CARD_2,
        released_at: pending.addendum.body.released_at,
        issued: undefined,
      },
    )
    const other = await stack.call(stack.bob, 'GET', `/api/engagements/${later}/version`)
    assert.equal(other.status, 404, other.text)
  })

  it('the client accepts by signing the addendum; a forged signature 400, a stale addendum 409, twice 409', async () => {
    const { pending } = await versionOf(later)
    const { body, hash } = pending!.addendum
    const forged = await accept(later, { addendum_hash: hash, signature: sign(stack.newClientKey(), body) })
    assert.deepEqual([forged.status, code(forged)], [400, 'bad_signature'])
    const stale = await accept(later, { addendum_hash: CARD_1, signature: sign(laterKey, body) })
    assert.deepEqual([stale.status, code(stale)], [409, 'version_not_pending'])
    assert.match(message(stale), /pending version is 1\.1\.0/)
    const bad = await accept(later, { addendum_hash: hash, signature: 'not a signature!' })
    assert.equal(bad.status, 400)
    const otherOrg = await stack.call(stack.bob, 'POST', `/api/engagements/${later}/version/accept`, {
      addendum_hash: hash,
      signature: sign(laterKey, body),
    })
    assert.equal(otherOrg.status, 404, otherOrg.text)
    const [one, two] = await Promise.all([
      accept(later, { addendum_hash: hash, signature: sign(laterKey, body) }),
      accept(later, { addendum_hash: hash, signature: sign(laterKey, body) }),
    ])
    assert.deepEqual([one!.status, two!.status].sort(), [200, 409], `${one!.text}\n${two!.text}`)
    const twice = [one!, two!].find((a) => a.status === 409)!
    assert.equal(code(twice), 'version_not_pending')
    assert.match(message(twice), /on 1\.1\.0/)
    const now = await versionOf(later)
    assert.equal(now.version, '1.1.0')
    assert.equal(now.card_hash, CARD_2)
    assert.equal(now.pending, null)
    assert.deepEqual(
      now.addenda.map((a) => [a.from_version, a.to_version]),
      [['1.0.0', '1.1.0']],
    )
  })

  it('tasks carry the engagement’s version; release and acceptance are receipts on the ledger and events', async () => {
    const task = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: later,
      text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
    })
    assert.equal(task.status, 200, task.text)
    assert.equal((task.body.task as { agent_version: string }).agent_version, '1.1.0')
    const initial = await stack.call(stack.alice, 'POST', '/api/tasks', {
      engagement_id: early,
      text: 'The ledger records every receipt.',
    })
    assert.equal((initial.body.task as { agent_version: string | null }).agent_version, null)
    const accepted = (await versionOf(later)).addenda[0]!.receipt_id
    await eventually('the receipts are on the ledger', async () => {
      const rows = await stack.db
        .selectFrom('receipt_outbox')
        .select(['receipt_type', 'ledger_index', 'envelope'])
        .where('receipt_type', 'in', ['agent.version_released', 'engagement.version_accepted'])
        .execute()
      return rows.length === 3 && rows.every((r) => r.ledger_index !== null)
    })
    const envelope = (
      await stack.db
        .selectFrom('receipt_outbox')
        .select('envelope')
        .where('id', '=', accepted)
        .executeTakeFirstOrThrow()
    ).envelope as { receipt: { data: Record<string, unknown> } }
    assert.equal(envelope.receipt.data.card_hash, CARD_2)
    assert.equal(envelope.receipt.data.to_version, '1.1.0')
    const { rows: events } = await sql<{ type: string; org_id: string }>`
      select type, org_id from rental_events
      where type in ('agent.version_released', 'engagement.version_accepted') order by seq`.execute(stack.db)
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.org_id === 'org_platform' ? 'platform' : 'client'}`),
      [
        'agent.version_released platform',
        'agent.version_released platform',
        'engagement.version_accepted client',
      ],
    )
  })
})
