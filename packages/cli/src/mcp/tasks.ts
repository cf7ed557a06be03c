/**
 * `run_task`, `get_task` and `verify_receipt`. A task's answer carries its receipt checked offline
 * (each check named). A task that needs an escrow of its own (every task after the package's first)
 * commits money: the person is asked before the task is made, and its escrow is signed only then.
 */
import { ok, signBody, type SvcClient, type Task, TERMINAL_STATES } from '@svc/client'
import { z } from 'zod'
import {
  answer,
  type Extra,
  failure,
  guarded,
  idempotent,
  progressOf,
  type Registrar,
  refusedBeforeSpending,
  type ToolContext,
} from './tool.ts'
import { aed, errorWords, receiptWords } from './words.ts'

const Verification = z.object({
  ok: z.boolean(),
  ledger_index: z.number().int(),
  checks: z.array(z.object({ check: z.string(), ok: z.boolean(), detail: z.string() })),
})
const TaskOut = {
  task_id: z.string(),
  engagement_id: z.string().nullable(),
  state: z.string().describe('submitted, working, input-required, completed, failed, canceled or rejected'),
  agent_name: z.string().nullable(),
  price_fils: z.number().int(),
  output_text: z.string().nullable(),
  escrow_state: z.string().nullable().describe('offered (not signed), open (held), released (paid)…'),
  receipt: Verification.nullable().describe('the receipt checked offline; null until it is on the ledger'),
}
type Verified = z.infer<typeof Verification>

/**
 * How long a call waits for the task, then for its receipt to reach the ledger: under a minute in
 * all, as MCP clients give up on a request after about that long (get_task answers later).
 */
const FOLLOW_MS = 40_000
const RECEIPT_MS = 10_000

/** The task's receipt, checked offline, once on the ledger; else null with why. */
async function receiptOf(
  client: SvcClient,
  task: Task,
): Promise<{ verified: Verified | null; note: string }> {
  if (!TERMINAL_STATES.includes(task.state))
    return { verified: null, note: 'Its receipt comes once it completes (verify_receipt then).' }
  if (task.state !== 'completed') return { verified: null, note: `The task is ${task.state}: no receipt.` }
  try {
    await client.withReceipt(task.id, RECEIPT_MS)
    const v = await client.verifyReceipt(task.id)
    const verified = { ok: v.ok, ledger_index: v.index, checks: v.checks }
    return { verified, note: receiptWords(task.id, verified) }
  } catch (err) {
    return { verified: null, note: `Receipt: ${errorWords(err)} (verify_receipt checks it later.)` }
  }
}

async function taskAnswer(client: SvcClient, task: Task, lead: string[]) {
  const { verified, note } = await receiptOf(client, task)
  const output = task.output?.text ?? (task.output?.data ? JSON.stringify(task.output.data) : null)
  const text = [
    `Task ${task.id} (${task.agent_name ?? task.agent_did}, “${task.job_title ?? task.job_id ?? ''}”) is ${task.state}.`,
    ...lead,
    output ? `Output:\n${output}` : task.error ? `Error: ${task.error}` : '',
    TERMINAL_STATES.includes(task.state)
      ? ''
      : `It is still running: get_task with task_id ${task.id} answers its output later.`,
    task.escrow_state
      ? `Payment: ${aed(task.price_fils)}, escrow ${task.escrow_state}${
          task.escrow_state === 'open' ? ' (release_payment pays the agent)' : ''
        }.`
      : '',
    note,
  ]
  return answer(text.filter(Boolean).join('\n\n'), {
    task_id: task.id,
    engagement_id: task.engagement_id,
    state: task.state,
    agent_name: task.agent_name,
    price_fils: task.price_fils,
    output_text: output,
    escrow_state: task.escrow_state,
    receipt: verified,
  })
}

/**
 * Follows a task's events until it ends (or the wait is over, or the caller cancelled), each one
 * told as progress; then reads it (with its escrow as signed).
 */
async function settled(client: SvcClient, task: Task, extra: Extra): Promise<Task> {
  const progress = progressOf(extra)
  if (!TERMINAL_STATES.includes(task.state))
    try {
      const signal = AbortSignal.any([AbortSignal.timeout(FOLLOW_MS), extra.signal])
      for await (const event of client.events(task.id, { signal })) {
        const to = typeof event.data.to === 'string' ? ` → ${event.data.to}` : ''
        progress(event.stream_seq, `task ${task.id}: ${event.type}${to}`)
      }
    } catch {
      // the wait is over: the answer says where the task is
    }
  return client.task(task.id)
}

export const taskTools: Registrar = (server, ctx) => {
  const { client } = ctx
  server.registerTool(
    'run_task',
    {
      title: 'Run a task with a hired agent',
      description:
        'Gives a hired agent a task (text in, output out) on an active engagement, waits for it, and answers ' +
        'the output with its receipt verified offline (each check named). The first task after hiring is ' +
        'prepaid; each later task holds its price in a new escrow, which COMMITS MONEY: the person is asked ' +
        'first (or the --allow-spend allowance is used), and if they decline no task is made.',
      inputSchema: {
        engagement_id: z
          .string()
          .min(1)
          .max(100)
          .describe('an active engagement (hire_agent, list_engagements)'),
        text: z.string().min(1).max(20_000).describe('the task for the agent, as text'),
      },
      outputSchema: {
        outcome: z.enum(['ran', 'declined', 'cancelled']),
        ...z.object(TaskOut).partial().shape,
      },
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    guarded(async ({ engagement_id, text }, extra) => runTask(ctx, engagement_id, text, extra)),
  )

  server.registerTool(
    'get_task',
    {
      title: 'A task and its output',
      description:
        'A task by its task_id: its state, output, payment and, once it completed, its receipt verified ' +
        'offline (each check named). Reading only.',
      inputSchema: { task_id: z.string().min(1).max(100) },
      outputSchema: TaskOut,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async ({ task_id }) => taskAnswer(client, await client.task(task_id), [])),
  )

  server.registerTool(
    'verify_receipt',
    {
      title: 'Verify a task’s receipt',
      description:
        'Checks a completed task’s receipt offline, with no one’s word for it: the issuer’s signature, that it ' +
        'is about this task, its leaf hash, the ledger’s key and checkpoint signature, and its inclusion proof ' +
        'in the public ledger. Answers each check by name. Reading only.',
      inputSchema: { task_id: z.string().min(1).max(100) },
      outputSchema: { task_id: z.string(), ...Verification.shape },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded(async ({ task_id }) => {
      const v = await client.verifyReceipt(task_id)
      const verified = { ok: v.ok, ledger_index: v.index, checks: v.checks }
      return answer(receiptWords(task_id, verified), { task_id, ...verified })
    }),
  )
}

async function runTask({ client, key, gate }: ToolContext, engagementId: string, text: string, extra: Extra) {
  const { engagement } = await ok(
    client.api.GET('/api/engagements/{id}', { params: { path: { id: engagementId } } }),
  )
  const price = engagement.price_fils
  const agent = engagement.agent_name ?? engagement.agent_did
  const who = engagement.provider_name ? `${agent} (by ${engagement.provider_name})` : agent
  const spend = {
    amountFils: price,
    counterparty: who,
    purpose:
      `Run a task with ${agent} on “${engagement.job_title ?? engagement.job_id}” (${engagementId}). This task ` +
      `holds ${aed(price)} of your wallet in a new escrow; the agent is paid when you release it.`,
  }
  // the package's escrow (not taken by a task yet) prepays the next task; else a new one is offered
  const needsEscrow = price > 0 && !engagement.escrows.some((e) => e.task_id === null)
  // the key first: a yes is asked for only when it can be signed
  const signer = needsEscrow ? await key() : undefined
  let decision = needsEscrow ? await gate.approve(spend) : undefined
  if (decision && !decision.ok) {
    if (decision.outcome === 'refused') return failure(decision.sentence)
    return answer(`${decision.sentence} No task was made.`, {
      outcome: decision.outcome,
      engagement_id: engagementId,
      price_fils: price,
    })
  }
  const created = await ok(
    client.api.POST('/api/tasks', {
      body: { engagement_id: engagementId, text, async: true },
      headers: idempotent(),
    }),
  ).catch((err: unknown) => {
    if (decision?.ok && refusedBeforeSpending(err)) decision.release()
    throw err
  })
  const lead: string[] = []
  const escrow = created.escrow
  if (escrow?.state === 'offered') {
    // offered after all (another task took the package's escrow meanwhile): asked now
    decision ??= await gate.approve(spend)
    if (!decision.ok) lead.push(`${decision.sentence} The task’s escrow stays unsigned.`)
    else if (escrow.amount_fils > price) {
      decision.release()
      lead.push(`Its escrow asks ${aed(escrow.amount_fils)}, more than allowed: it stays unsigned.`)
    } else {
      try {
        await ok(
          client.api.POST('/api/engagements/{id}/signatures', {
            params: { path: { id: engagementId } },
            body: {
              escrow_signatures: [
                { escrow_hash: escrow.hash, signature: await signBody(signer ?? (await key()), escrow) },
              ],
            },
            headers: idempotent(),
          }),
        )
        decision.covers([escrow.hash])
        lead.push(
          `Its escrow of ${aed(escrow.amount_fils)} to ${who} is signed (approved by ${
            decision.by === 'person' ? 'the person' : 'the session’s allowance'
          }).`,
        )
      } catch (err) {
        if (refusedBeforeSpending(err)) decision.release()
        lead.push(`Its escrow could not be signed: ${errorWords(err)}`)
      }
    }
  } else if (decision?.ok) decision.release() // approved, but no new escrow came: nothing spent
  const task = await settled(client, created.task, extra)
  const result = await taskAnswer(client, task, lead)
  return { ...result, structuredContent: { outcome: 'ran', ...result.structuredContent } }
}
