import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { b64Decode, b64Encode, b64uDecode, b64uEncode } from '@svc/trust/base64url'
import { parseCheckpoint } from '@svc/trust/checkpoint'
import { didKeyFromEd25519, ed25519FromDidKey } from '@svc/trust/did-key'
import { signEd25519, verifyEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { leafHash, verifyInclusion } from '@svc/trust/merkle'
import { openNote, verifierFromKey } from '@svc/trust/note'
import { verifyAgentResult } from '@svc/trust/agent-result'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { Role, type SendMessageRequest, TaskState } from '@a2a-js/sdk'
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client'
import { sql } from 'kysely'
import { type Answer, type FullStack, startFullStack } from '../support/full-stack.ts'
import { eventually } from '../support/stack.ts'
import { releaseAndInvoice } from '../support/sweep-objects.ts'

const codeOf = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code

interface Hop {
  hop_id: string
  depth: number
  agent_did: string
  state: string
  refusal: string | null
  input_sha256: string | null
  output_sha256: string | null
  agent_result: { agent_did: string; output_sha256: string } | null
  agent_signature: string | null
  signature_verified: boolean | null
  receipt: {
    id: string
    leaf_hash: string
    ledger_index: number | null
    envelope: { receipt: { issuer: string; type: string; data: Record<string, unknown> }; signature: string }
    proof: { tree_size: number; hashes: string[] } | null
    verified: boolean
    pending: boolean
  } | null
  children: Hop[]
}

interface Chain {
  terms_hash: string
  checkpoint: { note: string; size: number } | null
  root: Hop
}

const hopsOf = (hop: Hop): Hop[] => [hop, ...hop.children.flatMap(hopsOf)]

/** A SendMessage of a hop: the text for the member, the member named in the metadata. */
const hopMessage = (agentDid: string, text: string): SendMessageRequest => ({
  tenant: '',
  message: {
    messageId: randomUUID(),
    contextId: '',
    taskId: '',
    role: Role.ROLE_USER,
    parts: [
      { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' },
    ],
    metadata: { svc_team_agent_did: agentDid },
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
})

/**
 * The chain checked offline end to end, trusting only the ledger's log key: each hop's agent
 * signed its result, each receipt is the provider's and holds what the hop says, its leaf hash is
 * the envelope's, and its inclusion proof leads to the root of the checkpoint the log key signed.
 */
function verifyChainOffline(chain: Chain, logKey: string) {
  const checkpoint = parseCheckpoint(openNote(chain.checkpoint!.note, [verifierFromKey(logKey)]).text)
  for (const hop of hopsOf(chain.root)) {
    const receipt = hop.receipt!
    const { envelope } = receipt
    assert.ok(
      verifyEd25519(
        ed25519FromDidKey(envelope.receipt.issuer),
        canonicalBytes(envelope.receipt),
        b64uDecode(envelope.signature),
      ),
      `${hop.hop_id}: the receipt's signature`,
    )
    const leaf = leafHash(canonicalBytes(envelope))
    assert.equal(b64Encode(leaf), receipt.leaf_hash, hop.hop_id)
    assert.equal(receipt.pending, false, hop.hop_id)
    assert.equal(receipt.proof!.tree_size, checkpoint.size)
    assert.ok(
      verifyInclusion(
        leaf,
        receipt.ledger_index!,
        checkpoint.size,
        receipt.proof!.hashes.map(b64Decode),
        checkpoint.rootHash,
      ),
      `${hop.hop_id}: the inclusion proof`,
    )
    const data = envelope.receipt.data
    if (envelope.receipt.type === 'team.hop') {
      assert.deepEqual(
        [data.hop_id, data.agent_did, data.terms_hash, data.state],
        [hop.hop_id, hop.agent_did, chain.terms_hash, hop.state],
      )
      if (hop.state === 'completed') {
        assert.deepEqual(data.agent_result, hop.agent_result)
        assert.equal(data.agent_signature, hop.agent_signature)
      }
    } else {
      // the root: the lead's run, receipted as the task's completion with the lead's signed result
      assert.equal(envelope.receipt.type, 'task.completed')
      assert.equal(data.agent_did, hop.agent_did)
    }
  }
}

const TEXT =
  'The supplier confirmed the order on 12/03/2025. Please pay AED 12,500.00 to ops@example.com. ' +
  'Delivery follows within two weeks. The warehouse in Jebel Ali will receive the pallets.'

describe('rental teams: a lead delegating to members through the rental, hop by hop', () => {
  let s: FullStack
  let lead = ''
  let summariser = ''
  let extractor = ''

  const newTeam = (body: Record<string, unknown>) =>
    s.call(s.alice, 'POST', '/api/teams', {
      name: 'Brief team',
      lead_did: lead,
      job_id: 'job_team_brief',
      max_depth: 1,
      task_budget_fils: 1000,
      ...body,
    })

  /** Hires the team and signs its SLA (and escrow) as the client: the engagement's id. */
  const hireAndSign = async (teamId: string) => {
    const key = s.newClientKey()
    const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
    const hired = await s.call(s.alice, 'POST', `/api/teams/${teamId}/hire`, {
      client_did: didKeyFromEd25519(key.publicKey),
    })
    assert.equal(hired.status, 200, hired.text)
    const pkg = hired.body.package as {
      sla: { body: { team?: { members: Array<{ agent_did: string }> }; agent_did: string } }
      escrows: Array<{ body: unknown; hash: string }>
    }
    const id = (hired.body.engagement as { id: string }).id
    const signed = await s.call(s.alice, 'POST', `/api/engagements/${id}/signatures`, {
      sla_signature: sign(pkg.sla.body),
      escrow_signatures: pkg.escrows.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
    })
    assert.equal(signed.status, 200, signed.text)
    return { engagementId: id, sla: pkg.sla.body, key }
  }

  before(async () => {
    s = await startFullStack({ RENTAL_TASK_TIMEOUT_MS: '25000' })
    lead = await s.agentOf('job_team_brief')
    summariser = await s.agentOf('job_summary')
    extractor = await s.agentOf('job_extraction')
  })
  after(async () => s?.close())

  /** An A2A client of the delegation endpoint, from its card, its calls carrying `token`. */
  const delegationClient = (token: string): Promise<Client> =>
    new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [
          new JsonRpcTransportFactory({
            fetchImpl: (input, init) => {
              const headers = new Headers(init?.headers)
              if (token) headers.set('authorization', `Bearer ${token}`)
              return fetch(input, { ...init, headers })
            },
          }),
        ],
      }),
    ).createFromUrl(`${s.rental.url}/api/team-hops/agent-card.json`, '')

  it('refuses bad teams: no lead, duplicate members, the lead as a member, shares over 100 %, bad input', async () => {
    const member = { agent_did: summariser, share_bps: 1000 }
    const cases: Array<[Record<string, unknown>, number, string?]> = [
      [{ lead_did: undefined, members: [member] }, 400],
      [{ lead_did: '', members: [member] }, 400],
      [{ members: [] }, 400],
      [{ members: [member, member] }, 400, 'invalid_team'],
      [{ members: [member, { agent_did: lead, share_bps: 0 }] }, 400, 'invalid_team'],
      [
        {
          members: [
            { agent_did: summariser, share_bps: 6000 },
            { agent_did: extractor, share_bps: 4001 },
          ],
        },
        400,
        'invalid_team',
      ],
      [{ members: [{ agent_did: summariser, share_bps: 10_001 }] }, 400],
      [{ members: [member], max_depth: -1 }, 400],
      [{ members: [member], task_budget_fils: 1.5 }, 400],
      [{ members: [member], extra: true }, 400],
      [{ members: [member], delegation: [{ from: extractor, to: [summariser] }] }, 400, 'invalid_team'],
      [{ members: [member], job_id: 'job_nope' }, 404, 'job_not_found'],
    ]
    for (const [body, status, code] of cases) {
      const res = await newTeam(body)
      assert.equal(res.status, status, `${JSON.stringify(body).slice(0, 120)}: ${res.text}`)
      if (code) assert.equal(codeOf(res), code, res.text)
    }
    const { rows } = await sql<{ n: string }>`select count(*) as n from teams`.execute(s.db)
    assert.equal(Number(rows[0]!.n), 0)
  })

  it('runs a team task across two hops, each signed by its member and receipted; the chain verifies offline', async () => {
    const made = await newTeam({
      members: [
        { agent_did: summariser, share_bps: 3000, hop_fils: 100 },
        { agent_did: extractor, share_bps: 2000, hop_fils: 100 },
      ],
    })
    assert.equal(made.status, 201, made.text)
    const team = made.body as { id: string; state: string; terms_hash: string }
    assert.equal(team.state, 'draft')
    // not hired yet: no task, no end
    const early = await s.call(s.alice, 'POST', `/api/teams/${team.id}/tasks`, { text: TEXT })
    assert.deepEqual([early.status, codeOf(early)], [409, 'team_not_hired'])
    const { engagementId, sla, key } = await hireAndSign(team.id)
    // the SLA the client signed binds the team terms
    assert.equal(sla.agent_did, lead)
    assert.deepEqual(
      sla.team?.members.map((m) => m.agent_did),
      [summariser, extractor],
    )
    const again = await s.call(s.alice, 'POST', `/api/teams/${team.id}/hire`, {})
    assert.deepEqual([again.status, codeOf(again)], [409, 'team_already_hired'])

    const ran = await s.call(s.alice, 'POST', `/api/teams/${team.id}/tasks`, { text: TEXT })
    assert.equal(ran.status, 200, ran.text)
    const task = ran.body.task as { id: string; state: string; output?: { data?: Record<string, unknown> } }
    assert.equal(task.state, 'completed', ran.text)

    const chain = await s.call(s.alice, 'GET', `/api/teams/${team.id}/tasks/${task.id}/chain`)
    assert.equal(chain.status, 200, chain.text)
    const root = chain.body.root as Hop
    assert.equal(root.agent_did, lead)
    assert.equal(root.state, 'completed')
    assert.equal(root.children.length, 2)
    const hops = [root, ...root.children]
    for (const hop of hops) {
      // checked here offline: the agent's own signature over its result, by the hop's agent
      assert.ok(verifyAgentResult(hop.agent_result, hop.agent_signature), hop.hop_id)
      assert.equal(hop.agent_result!.agent_did, hop.agent_did)
      assert.equal(hop.agent_result!.output_sha256, hop.output_sha256)
      assert.equal(hop.signature_verified, true)
      assert.ok(hop.receipt?.leaf_hash)
    }
    assert.deepEqual(
      root.children.map((h) => [h.agent_did, h.depth, h.state]),
      [
        [summariser, 1, 'completed'],
        [extractor, 1, 'completed'],
      ],
    )
    // every receipt reaches the ledger; until then it is pending, never an error
    const hopCount = hops.length
    let proved = chain.body as unknown as Chain
    await eventually('the chain’s receipts are on the ledger', async () => {
      const now = await s.call(s.alice, 'GET', `/api/teams/${team.id}/tasks/${task.id}/chain`)
      assert.equal(now.status, 200, now.text)
      proved = now.body as unknown as Chain
      const receipts = hopsOf(proved.root).map((h) => h.receipt!)
      for (const r of receipts) if (r.pending) assert.equal(r.proof, null)
      return receipts.every((r) => !r.pending)
    })
    assert.equal(hopsOf(proved.root).length, hopCount)
    assert.ok(hopsOf(proved.root).every((h) => h.receipt!.verified))
    const logKey = ((await (await fetch(`${s.ledger.url}/v1/key`)).json()) as { verifier_key: string })
      .verifier_key
    verifyChainOffline(proved, logKey)
    // a proof against another root does not verify
    const first = proved.root.children[0]!.receipt!
    const checkpoint = parseCheckpoint(openNote(proved.checkpoint!.note, [verifierFromKey(logKey)]).text)
    assert.equal(
      verifyInclusion(
        leafHash(canonicalBytes(first.envelope)),
        first.ledger_index!,
        checkpoint.size,
        first.proof!.hashes.map(b64Decode),
        checkpoint.rootHash.map((b, i) => (i === 0 ? b ^ 1 : b)),
      ),
      false,
    )

    // each hop's receipt is in the outbox, with the hop's signed result in it
    const receipts = await s.db
      .selectFrom('receipt_outbox')
      .select(['id', 'receipt_type', 'envelope'])
      .where(
        'id',
        'in',
        hops.map((h) => h.receipt!.id),
      )
      .execute()
    assert.deepEqual(receipts.map((r) => r.receipt_type).sort(), ['task.completed', 'team.hop', 'team.hop'])
    for (const r of receipts.filter((r) => r.receipt_type === 'team.hop')) {
      const text = JSON.stringify(r.envelope)
      assert.match(text, new RegExp(team.terms_hash.slice(7)))
    }
    // the lead merged what its members signed
    const data = task.output?.data as { delegated: Array<{ verified: boolean }> }
    assert.deepEqual(
      data.delegated.map((d) => d.verified),
      [true, true],
    )

    // the delegation endpoint is an A2A agent; a finished task's hop credential is dead, a made-up one too
    const card = await fetch(`${s.rental.url}/api/team-hops/agent-card.json`)
    assert.equal(card.status, 200)
    const cardBody = (await card.json()) as { supportedInterfaces: Array<{ url: string }> }
    assert.equal(cardBody.supportedInterfaces[0]!.url, `${s.rental.url}/api/team-hops/a2a`)
    const bogus = await fetch(`${s.rental.url}/api/team-hops/a2a`, {
      method: 'POST',
      headers: { authorization: 'Bearer hop_nothing', 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: {} }),
    })
    assert.equal(bogus.status, 401)
    assert.match(bogus.headers.get('www-authenticate') ?? '', /invalid_token/)
    assert.equal(((await bogus.json()) as { error: { code: number } }).error.code, -31401)
    const noToken = await delegationClient('')
    await assert.rejects(noToken.sendMessage(hopMessage(summariser, 'x')))

    // another organization sees none of it
    for (const [method, path] of [
      ['GET', `/api/teams/${team.id}`],
      ['GET', `/api/teams/${team.id}/tasks/${task.id}/chain`],
      ['POST', `/api/teams/${team.id}/end`],
      ['POST', `/api/teams/${team.id}/tasks`],
    ] as const) {
      const res = await s.call(
        s.bob,
        method,
        path,
        method === 'POST' && path.endsWith('tasks') ? { text: 'x' } : undefined,
      )
      assert.deepEqual([res.status, codeOf(res)], [404, 'team_not_found'], `${path}: ${res.text}`)
    }
    const bobs = await s.call(s.bob, 'GET', '/api/teams')
    assert.equal((bobs.body.teams as unknown[]).length, 0)
    const listed = await s.call(s.alice, 'GET', '/api/teams')
    assert.ok((listed.body.teams as Array<{ id: string }>).some((t) => t.id === team.id))

    // the client releases the task's escrow to the lead; the end pays each member its share once
    await releaseAndInvoice(s, engagementId, key)
    const ended = await s.call(s.alice, 'POST', `/api/teams/${team.id}/end`)
    assert.equal(ended.status, 200, ended.text)
    const shares = ended.body.shares as Array<{ agent_did: string; amount_fils: number }>
    const net = ended.body.released_net_fils as number
    assert.ok(net > 0, ended.text)
    assert.deepEqual(
      shares.map((x) => x.amount_fils),
      [Math.floor((net * 3000) / 10_000), Math.floor((net * 2000) / 10_000)],
    )
    const twice = await s.call(s.alice, 'POST', `/api/teams/${team.id}/end`)
    assert.deepEqual([twice.status, codeOf(twice)], [409, 'team_ended'])
    const paid = await sql<{
      n: string
    }>`select count(*) as n from rail_transfers where kind = 'team_share'`.execute(s.db)
    assert.equal(Number(paid.rows[0]!.n), 2)
    const after = await s.call(s.alice, 'POST', `/api/teams/${team.id}/tasks`, { text: TEXT })
    assert.deepEqual([after.status, codeOf(after)], [409, 'team_ended'])
  })

  it('refuses hops outside the terms (a non-member, a loop back to the lead) and records them in the chain', async () => {
    const made = await newTeam({ members: [{ agent_did: summariser, share_bps: 5000, hop_fils: 10 }] })
    assert.equal(made.status, 201, made.text)
    const teamId = (made.body as { id: string }).id
    await hireAndSign(teamId)
    const ran = await s.call(s.alice, 'POST', `/api/teams/${teamId}/tasks`, { text: `${TEXT} [ask-lead]` })
    const task = ran.body.task as { id: string; state: string }
    assert.equal(task.state, 'completed', ran.text)
    const chain = await s.call(s.alice, 'GET', `/api/teams/${teamId}/tasks/${task.id}/chain`)
    const root = chain.body.root as Hop
    assert.deepEqual(
      root.children.map((h) => [h.agent_did, h.state, h.refusal]),
      [
        [summariser, 'completed', null],
        [extractor, 'refused', 'not_member'],
        [lead, 'refused', 'loop'],
      ],
    )
    for (const refused of root.children.slice(1)) {
      assert.ok(refused.receipt?.leaf_hash, 'a refusal is receipted')
      assert.equal(refused.agent_result, null)
    }
    assert.equal(chain.body.refused, 2)
    // refusals are receipted and proved like any hop
    let proved = chain.body as unknown as Chain
    await eventually('the refusals’ receipts are on the ledger', async () => {
      proved = (await s.call(s.alice, 'GET', `/api/teams/${teamId}/tasks/${task.id}/chain`))
        .body as unknown as Chain
      return hopsOf(proved.root).every((h) => !h.receipt!.pending)
    })
    const logKey = ((await (await fetch(`${s.ledger.url}/v1/key`)).json()) as { verifier_key: string })
      .verifier_key
    verifyChainOffline(proved, logKey)
    // another team's task id under this team: not found
    const other = await s.call(s.alice, 'GET', `/api/teams/${teamId}/tasks/tsk_nope/chain`)
    assert.deepEqual([other.status, codeOf(other)], [404, 'team_task_not_found'])

    // the A2A leg as any A2A client sees it: the task made to run again with a credential of our own
    // on its root hop (what the lead's message carries), then hops asked with the @a2a-js/sdk client
    const token = `hop_${randomBytes(32).toString('base64url')}`
    await s.db.updateTable('tasks').set({ state: 'working' }).where('id', '=', task.id).execute()
    await s.db
      .updateTable('team_hops')
      .set({
        state: 'running',
        token_hash: createHash('sha256').update(token).digest(),
        token_expires_at: new Date(Date.now() + 60_000),
      })
      .where('task_id', '=', task.id)
      .where('parent_id', 'is', null)
      .execute()
    const client = await delegationClient(token)
    const asked = await client.sendMessage(hopMessage(summariser, TEXT))
    assert.ok('artifacts' in asked)
    assert.equal(asked.status?.state, TaskState.TASK_STATE_COMPLETED)
    const artifact = asked.artifacts[0]!
    assert.ok(verifyAgentResult(artifact.metadata?.svc_result, artifact.metadata?.svc_signature as string))
    assert.equal((artifact.metadata?.svc_result as { agent_did: string }).agent_did, summariser)
    assert.equal((asked.metadata?.svc_receipt as { leaf_hash: string }).leaf_hash.length > 0, true)
    const read = await client.getTask({ tenant: '', id: asked.id, historyLength: undefined })
    assert.deepEqual([read.id, read.status?.state], [asked.id, TaskState.TASK_STATE_COMPLETED])
    const rejected = await client.sendMessage(hopMessage(extractor, TEXT))
    assert.ok('artifacts' in rejected)
    assert.equal(rejected.status?.state, TaskState.TASK_STATE_REJECTED)
    assert.equal(rejected.metadata?.svc_refusal, 'not_member')
    assert.deepEqual(rejected.artifacts, [])
    // bad input: no member, a member that is no did:key, a follow-up on a hop, an unknown hop
    const noMember = hopMessage(summariser, TEXT)
    noMember.message!.metadata = {}
    await assert.rejects(client.sendMessage(noMember), /svc_team_agent_did/)
    await assert.rejects(client.sendMessage(hopMessage('did:web:example.com', TEXT)), /svc_team_agent_did/)
    const followUp = hopMessage(summariser, TEXT)
    followUp.message!.taskId = asked.id
    await assert.rejects(client.sendMessage(followUp), /new hop/)
    await assert.rejects(client.getTask({ tenant: '', id: 'hop_nope', historyLength: undefined }))
    const afterAll = (await s.call(s.alice, 'GET', `/api/teams/${teamId}/tasks/${task.id}/chain`))
      .body as unknown as Chain
    assert.deepEqual(
      afterAll.root.children.slice(2).map((h) => [h.agent_did, h.state, h.refusal]),
      [
        [lead, 'refused', 'loop'],
        [summariser, 'completed', null],
        [extractor, 'refused', 'not_member'],
      ],
    )
    await s.db.updateTable('tasks').set({ state: 'completed' }).where('id', '=', task.id).execute()
    await assert.rejects(client.sendMessage(hopMessage(summariser, TEXT)), /unknown, expired or ended/)
  })

  it('refuses a hop the delegation rules do not name, and one over the task budget', async () => {
    const ruled = await newTeam({
      members: [
        { agent_did: summariser, share_bps: 0, hop_fils: 600 },
        { agent_did: extractor, share_bps: 0, hop_fils: 600 },
      ],
      delegation: [{ from: lead, to: [summariser] }],
      task_budget_fils: 10_000,
    })
    const budgeted = await newTeam({
      members: [
        { agent_did: summariser, share_bps: 0, hop_fils: 600 },
        { agent_did: extractor, share_bps: 0, hop_fils: 600 },
      ],
      task_budget_fils: 1000,
    })
    for (const [made, refusal] of [
      [ruled, 'not_allowed'],
      [budgeted, 'over_budget'],
    ] as const) {
      assert.equal(made.status, 201, made.text)
      const teamId = (made.body as { id: string }).id
      await hireAndSign(teamId)
      const ran = await s.call(s.alice, 'POST', `/api/teams/${teamId}/tasks`, { text: TEXT })
      const task = ran.body.task as { id: string; state: string }
      assert.equal(task.state, 'completed', ran.text)
      const chain = await s.call(s.alice, 'GET', `/api/teams/${teamId}/tasks/${task.id}/chain`)
      const root = chain.body.root as Hop & { cost_fils?: number }
      assert.deepEqual(
        root.children.map((h) => [h.agent_did, h.state, h.refusal]),
        [
          [summariser, 'completed', null],
          [extractor, 'refused', refusal],
        ],
      )
    }
  })

  it('refuses every hop past max_depth', async () => {
    const made = await newTeam({ members: [{ agent_did: summariser, share_bps: 0 }], max_depth: 0 })
    const teamId = (made.body as { id: string }).id
    await hireAndSign(teamId)
    const ran = await s.call(s.alice, 'POST', `/api/teams/${teamId}/tasks`, { text: TEXT })
    const task = ran.body.task as { id: string; state: string }
    assert.equal(task.state, 'completed', ran.text)
    const chain = await s.call(s.alice, 'GET', `/api/teams/${teamId}/tasks/${task.id}/chain`)
    const root = chain.body.root as Hop
    assert.deepEqual(
      root.children.map((h) => [h.agent_did, h.state, h.refusal]),
      [
        [summariser, 'refused', 'too_deep'],
        [extractor, 'refused', 'not_member'],
      ],
    )
  })
})
