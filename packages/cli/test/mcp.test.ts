/**
 * `svc mcp` with the official MCP SDK's client over stdio, against the running stack: the tools and
 * their schemas, the main path (search, hire, run a task, its receipt, pay), and the spending rule:
 * elicitation accepted (spent once) and declined (nothing spent), a client that cannot ask
 * (refused), and one within an allowance (--allow-spend).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { TOOLS } from '../src/mcp/server.ts'
import { type FullStack, startFullStack } from '../../../services/rental/test/support/full-stack.ts'
import { spawn } from 'node:child_process'
import { tempFolder } from '@svc/kit/testing'
import { RECEIPT_CHECKS } from '@svc/client/receipts'
import { BIN, McpProcess } from './support/mcp.ts'

type Json = Record<string, unknown>
const INVOICE = 'Invoice INV-1042, Gulf Supplies LLC\n3 x Printer paper @ 25.00 AED = 75.00 AED'

describe('svc mcp over stdio', () => {
  let stack: FullStack
  const servers: McpProcess[] = []
  let job: { job_id: string; price_fils: number; price: string; agents: Array<{ did: string; name: string }> }

  before(async () => {
    // a device sign-in per server process: more than the idp lets one person enter in a minute
    stack = await startFullStack({}, { idpEnv: { IDP_USER_CODE_RATE_PER_MIN: '0' } })
    await stack.agentOf('job_invoice_check')
    // the organization's wallet is granted at its first hire: one made here, so balances compare exactly
    await stack.hireAndSign(
      stack.alice,
      'job_invoice_check',
      await stack.agentOf('job_invoice_check'),
      stack.newClientKey(),
    )
  })
  after(async () => {
    await Promise.all(servers.map((s) => s.close()))
    await stack?.close()
  })

  /** An MCP server process signed in as alice, and a client connected to it. */
  async function connect(
    options: { elicit?: ElicitResult[]; allowSpend?: string; env?: Record<string, string> } = {},
  ) {
    const server = await McpProcess.start(stack, options)
    servers.push(server)
    return server
  }
  const get = async (path: string) => (await stack.call(stack.alice, 'GET', path)).body
  const wallet = async () => ((await get('/api/wallet')).balance as { amount_fils: number }).amount_fils
  const engagements = async () =>
    ((await get('/api/engagements?limit=100&offset=0')).engagements as Json[]).length
  const tasks = async () => ((await get('/api/tasks?limit=100&offset=0')).tasks as Json[]).length

  it('lists its nine tools, each with a description, an input schema and an output schema', async () => {
    const mcp = await connect()
    const { tools } = await mcp.client.listTools()
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOLS].sort())
    for (const tool of tools) {
      assert.ok((tool.description ?? '').length > 80, `${tool.name} is described`)
      assert.equal(tool.inputSchema.type, 'object')
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} has an output schema`)
    }
    const hire = tools.find((t) => t.name === 'hire_agent')!
    assert.deepEqual(hire.inputSchema.required, ['job_id'])
    assert.match(hire.description!, /COMMITS MONEY/)
    assert.equal(mcp.client.getServerVersion()?.name, 'svc')
    // the client goes (stdin ends): the server stops by itself, before the SDK's 2 s wait would kill it
    const closing = Date.now()
    await mcp.close()
    assert.ok(Date.now() - closing < 1900, `stopped in ${Date.now() - closing} ms`)
  })

  it('with a client that asks the person: search, hire (declined, then accepted), run a task, its receipt, pay', async () => {
    const mcp = await connect({
      elicit: [
        { action: 'decline' },
        { action: 'accept', content: { confirm: true } },
        { action: 'cancel' },
        { action: 'accept', content: { confirm: true } },
        { action: 'accept', content: { confirm: false } },
        { action: 'accept', content: { confirm: true } },
      ],
    })
    const found = await mcp.call('search_market', { query: 'invoice' })
    const jobs = found.structuredContent!.jobs as (typeof job)[]
    job = jobs.find((j) => j.job_id === 'job_invoice_check')!
    assert.ok(job && job.price_fils > 0 && job.agents.length > 0)
    assert.match(found.text, new RegExp(`${job.price.replace('.', '\\.')} a task`))
    assert.match(job.price, /^AED \d[\d,]*\.\d\d$/)
    const agent = job.agents[0]!
    assert.match(found.text, new RegExp(agent.name))
    const detail = await mcp.call('get_job', { job_id: job.job_id })
    assert.equal(detail.structuredContent!.job_id, job.job_id)

    // declined: nothing is made and nothing spent
    const [walletBefore, engagementsBefore] = [await wallet(), await engagements()]
    const declined = await mcp.call('hire_agent', { job_id: job.job_id })
    assert.equal(declined.isError, undefined)
    assert.equal(declined.structuredContent!.outcome, 'declined')
    assert.match(declined.text, /declined .*nothing was spent/)
    assert.equal(mcp.asked.length, 1)
    assert.match(mcp.asked[0]!, new RegExp(`${job.price.replace('.', '\\.')}.*${agent.name}`, 's'))
    assert.deepEqual([await wallet(), await engagements()], [walletBefore, engagementsBefore])

    // accepted: hired, the first task's price held once
    const hired = await mcp.call('hire_agent', { job_id: job.job_id, agent_did: agent.did })
    assert.equal(hired.structuredContent!.outcome, 'hired', hired.text)
    assert.equal(hired.structuredContent!.approved_by, 'person')
    const engagementId = hired.structuredContent!.engagement_id as string
    assert.match(hired.text, new RegExp(`Hired ${agent.name}.*${job.price.replace('.', '\\.')} is held`))
    assert.equal(await wallet(), walletBefore - job.price_fils)
    assert.equal(await engagements(), engagementsBefore + 1)
    const engagement = (await get(`/api/engagements/${engagementId}`)).engagement as Json
    assert.equal(engagement.state, 'active')

    // the first task is prepaid: no question; its receipt is checked offline, each check named
    const ran = await mcp.call('run_task', { engagement_id: engagementId, text: INVOICE })
    assert.equal(mcp.asked.length, 2, 'the prepaid task asked nothing')
    // the task's events came as progress notifications, from its creation to its end
    assert.match(mcp.progress[0]!, /^task tsk_\S+: task\.created$/)
    assert.match(mcp.progress.at(-1)!, /: task\.state_changed → completed$/)
    const out = ran.structuredContent!
    assert.equal(out.outcome, 'ran')
    assert.equal(out.state, 'completed', ran.text)
    assert.ok(typeof out.output_text === 'string' && out.output_text.length > 0)
    const receipt = out.receipt as { ok: boolean; checks: Array<{ check: string; ok: boolean }> }
    assert.equal(receipt.ok, true, ran.text)
    assert.deepEqual(
      receipt.checks.map((c) => c.check),
      [...RECEIPT_CHECKS],
    )
    for (const check of receipt.checks) assert.match(ran.text, new RegExp(`- ok ${check.check}: `))
    const taskId = out.task_id as string
    const verified = await mcp.call('verify_receipt', { task_id: taskId })
    assert.equal(verified.structuredContent!.ok, true)
    assert.match(verified.text, /is verified offline: every check passed/)
    const again = await mcp.call('get_task', { task_id: taskId })
    assert.equal(again.structuredContent!.output_text, out.output_text)

    // the next task needs an escrow of its own: cancelled, no task is made and nothing spent
    const [walletMid, tasksMid] = [await wallet(), await tasks()]
    const cancelled = await mcp.call('run_task', { engagement_id: engagementId, text: INVOICE })
    assert.equal(cancelled.structuredContent!.outcome, 'cancelled')
    assert.match(cancelled.text, /cancelled .*nothing was spent\. No task was made/)
    assert.deepEqual([await wallet(), await tasks()], [walletMid, tasksMid])
    // accepted: the task runs and its escrow is held, once
    const second = await mcp.call('run_task', { engagement_id: engagementId, text: INVOICE })
    assert.equal(second.structuredContent!.state, 'completed', second.text)
    assert.equal(second.structuredContent!.escrow_state, 'open')
    assert.equal(await wallet(), walletMid - job.price_fils)

    // paying: the form sent back unticked is a no; nothing is released
    const unticked = await mcp.call('release_payment', { engagement_id: engagementId })
    assert.equal(unticked.structuredContent!.outcome, 'declined')
    const held = ((await get(`/api/engagements/${engagementId}`)).engagement as Json).escrows as Json[]
    assert.deepEqual(
      held.map((e) => e.state),
      ['open', 'open'],
    )
    // ticked: one question for both tasks; each escrow released once
    const paid = await mcp.call('release_payment', { engagement_id: engagementId })
    assert.equal(paid.structuredContent!.outcome, 'released', paid.text)
    assert.equal(paid.structuredContent!.amount_fils, 2 * job.price_fils)
    assert.match(mcp.asked.at(-1)!, new RegExp(`Amount: AED [\\d,]+\\.\\d\\d\\. Paid to: ${agent.name}`))
    const escrows = ((await get(`/api/engagements/${engagementId}`)).engagement as Json).escrows as Json[]
    assert.deepEqual(
      escrows.map((e) => e.state),
      ['released', 'released'],
    )
    const nothing = await mcp.call('release_payment', { engagement_id: engagementId })
    assert.equal(nothing.structuredContent!.outcome, 'nothing_to_release')
    assert.equal(mcp.asked.length, 6)

    const listed = await mcp.call('list_engagements', {})
    assert.ok((listed.structuredContent!.engagements as Json[]).some((e) => e.engagement_id === engagementId))
    const statement = await mcp.call('get_statement', {})
    const kinds = (statement.structuredContent!.movements as Json[]).map((m) => m.kind)
    assert.ok(kinds.includes('release') && kinds.includes('escrow_hold'), kinds.join())
    assert.match(statement.text, /^Statement from .*: wallet AED [\d,]+\.\d\d → AED/)
  })

  it('answers errors as a sentence with isError, never a stack', async () => {
    const mcp = await connect()
    const cases: Array<[string, Json, RegExp]> = [
      ['get_task', { task_id: 'tsk_nope' }, /no task with that id/],
      ['get_job', { job_id: 'job_nope' }, /no job with that id/],
      ['run_task', { engagement_id: 'eng_nope', text: 'hello' }, /no engagement with that id/],
      ['hire_agent', { job_id: 'job_invoice_check', agent_did: 'did:key:z6Mknope' }, /does not do that job/],
    ]
    for (const [name, args, words] of cases) {
      const res = await mcp.call(name, args)
      assert.equal(res.isError, true, name)
      assert.match(res.text, words)
      assert.doesNotMatch(res.text, /\n\s+at /)
    }
    // no passphrase for the signing key: said so, before anything is asked or spent
    const locked = await connect({ elicit: [], env: { SVC_KEY_PASSPHRASE: '' } })
    const [walletBefore, engagementsBefore] = [await wallet(), await engagements()]
    const res = await locked.call('hire_agent', { job_id: 'job_invoice_check' })
    assert.equal(res.isError, true)
    assert.match(res.text, /set SVC_KEY_PASSPHRASE in the MCP server’s environment/)
    assert.deepEqual(locked.asked, [])
    assert.deepEqual([await wallet(), await engagements()], [walletBefore, engagementsBefore])
  })

  it('with a client that cannot ask: a payment is refused and nothing is spent', async () => {
    const mcp = await connect()
    const [walletBefore, engagementsBefore] = [await wallet(), await engagements()]
    const refused = await mcp.call('hire_agent', { job_id: 'job_invoice_check' })
    assert.equal(refused.isError, true)
    assert.match(refused.text, /^Refused: AED [\d,.]+ to .* cannot ask .*Nothing was spent\. .*--allow-spend/)
    assert.deepEqual([await wallet(), await engagements()], [walletBefore, engagementsBefore])
  })

  it('with --allow-spend: proceeds within the allowance, then refuses with a sentence', async () => {
    const price = job?.price_fils ?? 1
    // enough for one hire and half another
    const mcp = await connect({ allowSpend: (Math.floor(price * 1.5) / 100).toFixed(2) })
    const walletBefore = await wallet()
    const hired = await mcp.call('hire_agent', { job_id: 'job_invoice_check' })
    assert.equal(hired.structuredContent!.outcome, 'hired', hired.text)
    assert.equal(hired.structuredContent!.approved_by, 'allowance')
    assert.equal(await wallet(), walletBefore - price)
    const engagementId = hired.structuredContent!.engagement_id as string
    const ran = await mcp.call('run_task', { engagement_id: engagementId, text: INVOICE })
    assert.equal(ran.structuredContent!.state, 'completed', ran.text)
    // paying the escrow the allowance already held counts nothing more
    const paid = await mcp.call('release_payment', { engagement_id: engagementId })
    assert.equal(paid.structuredContent!.outcome, 'released', paid.text)
    const [walletNow, engagementsNow, tasksNow] = [await wallet(), await engagements(), await tasks()]
    // a second task needs a new escrow: over what is left, refused; nothing made, nothing spent
    const over = await mcp.call('run_task', { engagement_id: engagementId, text: INVOICE })
    assert.equal(over.isError, true)
    assert.match(
      over.text,
      /^Refused: .* is more than the AED [\d,.]+ left of this session’s spending allowance/,
    )
    const second = await mcp.call('hire_agent', { job_id: 'job_invoice_check' })
    assert.equal(second.isError, true)
    assert.deepEqual(
      [await wallet(), await engagements(), await tasks()],
      [walletNow, engagementsNow, tasksNow],
    )
  })

  it('refuses to start without a sign-in, or with an allowance that is not an amount: one sentence, nothing on stdout', async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, 'mcp', ...args], {
          env: {
            ...process.env,
            SVC_HOME: tempFolder(),
            SVC_IDP_URL: stack.idp.url,
            SVC_RENTAL_URL: stack.rental.url,
          },
        })
        let [stdout, stderr] = ['', '']
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
        child.on('close', (code) => resolve({ code, stdout, stderr }))
        child.stdin.end()
      })
    const unsigned = await run([])
    assert.deepEqual([unsigned.code, unsigned.stdout], [1, ''])
    assert.match(unsigned.stderr, /^svc: Not signed in: run `svc login`\.\n$/)
    const wrong = await run(['--allow-spend', 'ten'])
    assert.deepEqual([wrong.code, wrong.stdout], [2, ''])
    assert.match(
      wrong.stderr,
      /^svc: --allow-spend takes an amount of AED \(for example 25 or 25\.50\), not “ten”\.\n$/,
    )
  })
})
