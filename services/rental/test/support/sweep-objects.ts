import { b64uEncode } from '@svc/trust/base64url'
import { didKeyFromEd25519 } from '@svc/trust/did-key'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import { newNotesKey, storeToolCredential } from './connect-client.ts'
import type { Client, FullStack } from './full-stack.ts'
import { fundReserve, newTask, quoteAndBuy } from './money-actions.ts'

/** Releases every escrow of the engagement whose task completed (signed with `key`), then invoices the engagement: the invoice's id, or ''. */
export async function releaseAndInvoice(stack: FullStack, engagementId: string, key: Ed25519KeyPair) {
  const pending = await stack.call(stack.alice, 'GET', `/api/engagements/${engagementId}/releases/pending`)
  for (const r of (pending.body.releases ?? []) as Array<{
    escrow: { hash: string }
    instruction: unknown
  }>) {
    const signature = b64uEncode(signEd25519(key.seed, canonicalBytes(r.instruction)))
    await stack.call(stack.alice, 'POST', `/api/engagements/${engagementId}/releases`, {
      escrow_hash: r.escrow.hash,
      instruction: { body: r.instruction, signature },
    })
  }
  const invoice = await stack.call(stack.alice, 'POST', '/api/invoices', { engagement_id: engagementId })
  return (invoice.body as { id?: string }).id ?? ''
}

/**
 * One object of each kind alice owns, by the collection its id appears under in the paths:
 * a token (not the sweep's credential), a secret of the /v1 vault, the agent she hires, an active engagement, a task, a
 * refund of the task's released escrow, a dispute of it, a webhook (subscribed to test events only, to a closed local port), a schedule, a batch, a budget, a file, and an
 * approval (a task on a second engagement whose policy holds every task), a trial of a listing of the agent,
 * an incident about the engagement, a policy on the engagement (an operator funds the reserve that backs it), a legal hold over the second engagement,
 * a business check, a tool-call action (connect), a team (hired, with a task: the chain's `task_id`),
 * a custom role and a tenant export.
 */
export async function aliceObjects(stack: FullStack): Promise<Record<string, string>> {
  const ids: Record<string, string> = {}
  const probed = await stack.call(stack.alice, 'POST', '/api/tokens', { label: 'probed' })
  ids.tokens = (probed.body as { id: string }).id
  const secret = await stack.call(stack.alice, 'PUT', '/v1/secrets', { name: 'probed', value: 'the sweep’s' })
  ids.secrets = (secret.body as { name?: string }).name ?? ''
  ids.agents = await stack.agentOf('job_summary')
  const key = stack.newClientKey()
  ids.engagements = await stack.hireAndSign(stack.alice, 'job_summary', ids.agents, key)
  const task = await stack.call(stack.alice, 'POST', '/api/tasks', {
    engagement_id: ids.engagements,
    text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
  })
  ids.tasks = (task.body.task as { id: string } | undefined)?.id ?? ''
  ids.invoices = await releaseAndInvoice(stack, ids.engagements, key)
  const refund = await stack.call(stack.alice, 'POST', '/api/refunds', {
    task_id: ids.tasks,
    amount_fils: 1,
    reason: 'The sweep asks for one fil back.',
  })
  ids.refunds = (refund.body as { id?: string }).id ?? ''
  // before the dispute: a refund is not requested while a dispute freezes the escrow
  ids['credit-notes'] = await settledCreditNote(stack, ids.tasks)
  const dispute = await stack.call(stack.alice, 'POST', '/api/disputes', {
    task_id: ids.tasks,
    amount_fils: 1,
    reason: 'The sweep disputes one fil.',
  })
  ids.disputes = (dispute.body as { id?: string }).id ?? ''
  // a policy on the engagement, so its insurance (read per engagement) is alice's to read: an
  // escrow opened (money at risk), the release's fee moved into the reserve by an operator (the
  // funds that back the cover), the platform's quote bought
  await newTask(stack, stack.alice, ids.engagements, key, 'Insured: the ledger records every receipt.')
  // the operator: ops@sweep.example in the auth sweep, alice (the demo user) in development
  for (const operator of [await sweepOperator(stack), stack.alice]) {
    const funds = await stack.call(operator, 'GET', '/api/insurance/funds')
    if (funds.status !== 200) continue
    await fundReserve(stack, operator, (funds.body.fees as { amount_fils: number }).amount_fils)
    break
  }
  const insured = await quoteAndBuy(stack, stack.alice, ids.engagements, { coverage_fils: 200 })
  if (insured.bought?.status !== 201)
    throw new Error(`no policy for the sweep: ${insured.quote.text} ${insured.bought?.text ?? ''}`)
  const batch = await stack.call(stack.alice, 'POST', '/api/batches', {
    engagement_id: ids.engagements,
    items: ['A batch of one. The ledger records every receipt.'],
  })
  ids.batches = (batch.body as { id?: string }).id ?? ''
  const hook = await stack.call(stack.alice, 'POST', '/api/webhooks', {
    url: 'https://127.0.0.1:9/sweep',
    event_types: ['webhook.test'],
  })
  ids.webhooks = (hook.body as { id?: string }).id ?? ''
  const schedule = await stack.call(stack.alice, 'POST', '/api/schedules', {
    engagement_id: ids.engagements,
    text: 'Summarise the ledger’s day.',
    cron: '0 9 * * *',
  })
  ids.schedules = (schedule.body as { id?: string }).id ?? ''
  // a budget for an agent no one hires: it caps nothing the sweeps do
  const budget = await stack.call(stack.alice, 'POST', '/api/budgets', {
    limit_fils: 1_000_000,
    agent_did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
  })
  ids.budgets = (budget.body as { id?: string }).id ?? ''
  const file = await stack.alice.jar.fetch(
    `${stack.rental.url}/api/engagements/${ids.engagements}/files?name=sweep.txt`,
    {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-csrf-token': stack.alice.csrf },
      body: 'A file the sweeps probe.',
    },
  )
  ids.files = ((await file.json()) as { id?: string }).id ?? ''
  const held = await stack.hireAndSign(stack.alice, 'job_summary', ids.agents, stack.newClientKey())
  await stack.call(stack.alice, 'POST', `/api/engagements/${held}/config`, { approval: { mode: 'always' } })
  await stack.call(stack.alice, 'POST', '/api/tasks', { engagement_id: held, text: 'Held for approval.' })
  const approvals = await stack.call(stack.alice, 'GET', '/api/approvals?state=pending')
  ids.approvals = (approvals.body.approvals as Array<{ id: string }> | undefined)?.[0]?.id ?? ''
  // a legal hold over that second engagement only: the sweeps' deletions elsewhere go on
  const hold = await stack.call(stack.alice, 'POST', '/api/retention/hold', {
    engagement_id: held,
    reason: 'The sweep’s legal hold.',
  })
  ids.hold = (hold.body as { id?: string }).id ?? ''
  ids.trials = await aliceTrial(stack, ids.agents)
  const incident = await stack.call(stack.alice, 'POST', '/api/incidents', {
    engagement_id: ids.engagements,
    severity: 'sev4',
    summary: 'The sweep’s incident',
    impact: 'None: the sweep reports it to probe the incident routes.',
  })
  ids.incidents = (incident.body as { id?: string }).id ?? ''
  // a business check: its domain does not resolve, so it waits for it (awaiting_domain)
  const kyb = await stack.call(stack.alice, 'POST', '/api/onboarding/kyb', {
    domain: 'alice-sweep.invalid',
    entity_name: 'Alice Sweep Ltd',
    jurisdiction: 'AE',
    registration: 'SWEEP-1',
  })
  ids.kyb = (kyb.body as { id?: string }).id ?? ''
  ids.actions = await aliceAction(stack)
  // GET /api/connect/calls/{id}: the same action, read with a task credential (another task's: 404)
  ids.calls = ids.actions
  // the engagement bound too, so its connect routes have a connection to read
  await bindNotes(stack, ids.engagements)
  const team = await stack.call(stack.alice, 'POST', '/api/teams', {
    name: 'Sweep team',
    lead_did: await stack.agentOf('job_team_brief'),
    job_id: 'job_team_brief',
    members: [{ agent_did: ids.agents, share_bps: 1000 }],
    max_depth: 1,
    task_budget_fils: 0,
  })
  ids.teams = (team.body as { id?: string }).id ?? ''
  ids.task_id = await teamTask(stack, ids.teams)
  // a custom role (DELETE /v1/roles/{name}: another organization's is 404) and a tenant export
  const role = await stack.call(stack.alice, 'PUT', '/v1/roles', {
    name: 'sweep-role',
    permissions: ['org:read'],
  })
  ids.roles = (role.body as { name?: string }).name ?? ''
  const exported = await stack.call(stack.alice, 'POST', '/v1/tenant/exports')
  ids.exports = (exported.body as { id?: string }).id ?? ''
  for (const [name, id] of Object.entries(ids)) if (!id) throw new Error(`no ${name} object: ${task.text}`)
  return ids
}

/** Binds the engagement to a new demo notebook (every tool allowed, writes held for approval). */
async function bindNotes(stack: FullStack, engagement: string) {
  const key = await newNotesKey(stack)
  const bound = await stack.call(stack.alice, 'POST', `/api/engagements/${engagement}/connect`, {
    url: key.mcp_url,
    api_key: key.api_key,
  })
  if (bound.status !== 201) throw new Error(`bind: ${bound.status} ${bound.text}`)
}

/**
 * A tool-call action of alice's: an engagement of the note-taker bound to a demo notebook, whose
 * task lists the notes (a call made at once) and asks to create one (held for approval).
 */
async function aliceAction(stack: FullStack) {
  const did = await stack.agentOf('job_notes')
  const engagement = await stack.hireAndSign(stack.alice, 'job_notes', did, stack.newClientKey())
  await bindNotes(stack, engagement)
  await stack.call(stack.alice, 'POST', '/api/tasks', { engagement_id: engagement, text: 'A note to file.' })
  const actions = await stack.call(stack.alice, 'GET', `/api/engagements/${engagement}/connect/actions`)
  return (actions.body.actions as Array<{ id: string }> | undefined)?.[0]?.id ?? ''
}

/**
 * A credit note of alice's: a second refund of one fil, accepted and approved by an operator (the
 * auth sweep's `ops@sweep.example`; in development, where RENTAL_OPERATORS is unset, the demo
 * user alice is one). '' when no one could approve it.
 */
async function settledCreditNote(stack: FullStack, taskId: string) {
  const refund = await stack.call(stack.alice, 'POST', '/api/refunds', {
    task_id: taskId,
    amount_fils: 1,
    reason: 'The sweep’s credit note.',
  })
  const id = (refund.body as { id?: string }).id ?? ''
  const ops = await sweepOperator(stack)
  for (const operator of [ops, stack.alice]) {
    if ((await stack.call(operator, 'POST', `/api/refunds/${id}/accept`, {})).status >= 300) continue
    const approved = await stack.call(operator, 'POST', `/api/refunds/${id}/approve`, {})
    const note = (approved.body as { credit_note?: { id: string } | null }).credit_note
    if (note) return note.id
  }
  return ''
}

/**
 * A trial of alice's of a listing of the agent: published by an operator (alice where she is one,
 * else ops@sweep.example, the auth sweep's operator); one task of it run, so that it has one.
 */
async function aliceTrial(stack: FullStack, agentDid: string) {
  const listing = {
    agent_did: agentDid,
    title: 'Sweep digest',
    description: 'A listing for the sweeps to try.',
    price_fils: 2500,
  }
  let published = await stack.call(stack.alice, 'POST', '/api/market/listings', listing)
  if (published.status === 403) {
    const ops = await sweepOperator(stack)
    published = await stack.call(ops, 'POST', '/api/market/listings', listing)
  }
  const trial = await stack.call(stack.alice, 'POST', '/api/trials', {
    listing_id: (published.body as { id?: string }).id ?? '',
  })
  const id = (trial.body as { id?: string }).id ?? ''
  if (id)
    await stack.call(stack.alice, 'POST', `/api/trials/${id}/tasks`, { text: 'A trial task.', async: true })
  return id
}

const operators = new WeakMap<FullStack, Promise<Client>>()
/** `ops@sweep.example` signed in, once per stack (the auth sweep's operator; a plain client elsewhere). */
const sweepOperator = (stack: FullStack) => {
  let ops = operators.get(stack)
  if (!ops) operators.set(stack, (ops = stack.signInWith('ops@sweep.example')))
  return ops
}

/**
 * A tool-call credential for the task the approval holds (input-required: still running), stored
 * as the rental stores the ones it gives agents; its engagement has no connection.
 */
export async function toolCredential(stack: FullStack, approvalId: string) {
  const approval = await stack.call(stack.alice, 'GET', `/api/approvals/${approvalId}`)
  const { task_id, engagement_id } = approval.body as { task_id: string; engagement_id: string }
  return storeToolCredential(stack, task_id, engagement_id)
}

/** Hires the team (its SLA and escrow signed by a new client key) and runs one team task: its id. */
async function teamTask(stack: FullStack, teamId: string) {
  const key = stack.newClientKey()
  const sign = (body: unknown) => b64uEncode(signEd25519(key.seed, canonicalBytes(body)))
  const hired = await stack.call(stack.alice, 'POST', `/api/teams/${teamId}/hire`, {
    client_did: didKeyFromEd25519(key.publicKey),
  })
  const pkg = hired.body.package as
    { sla: { body: unknown }; escrows: Array<{ body: unknown; hash: string }> } | undefined
  const engagement = (hired.body.engagement as { id?: string } | undefined)?.id
  if (!pkg || !engagement) return ''
  await stack.call(stack.alice, 'POST', `/api/engagements/${engagement}/signatures`, {
    sla_signature: sign(pkg.sla.body),
    escrow_signatures: pkg.escrows.map((e) => ({ escrow_hash: e.hash, signature: sign(e.body) })),
  })
  const task = await stack.call(stack.alice, 'POST', `/api/teams/${teamId}/tasks`, {
    text: 'The ledger records every receipt. Each receipt is a leaf in a Merkle tree.',
  })
  return (task.body.task as { id?: string } | undefined)?.id ?? ''
}
