import assert from 'node:assert/strict'
import { type AddressInfo, createServer } from 'node:net'
import type { FullStack } from '../support/full-stack.ts'

export { launchRental, rentalReady } from '../support/rental-process.ts'

/** What the fault tests read of a task (GET /api/tasks/{id}). */
export interface FaultTask {
  id: string
  state: string
  async: boolean
  error: string | null
  message?: string
  runs: Array<{ attempt: number; error: string }> | null
  receipt: { id: string; leaf_hash: string | null; ledger_index: number | null } | null
}

const ENDED = new Set(['completed', 'failed', 'canceled', 'rejected'])
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** A console call to the rental instance at `url` (another than the stack's). */
export async function callAt(stack: FullStack, url: string, method: string, path: string, body?: unknown) {
  const res = await stack.alice.jar.fetch(`${url}${path}`, {
    method,
    headers: {
      'x-csrf-token': stack.alice.csrf,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  return { status: res.status, text, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> }
}

/**
 * A new task as the console makes it (at the instance at `url`, else the stack's); answers the
 * status and the task's id when the rental answered one.
 */
export async function postTask(
  stack: FullStack,
  engagement: string,
  text: string,
  async: boolean,
  url = stack.rental.url,
) {
  try {
    const body = { engagement_id: engagement, text, async }
    const res =
      url === stack.rental.url
        ? await stack.call(stack.alice, 'POST', '/api/tasks', body)
        : await callAt(stack, url, 'POST', '/api/tasks', body)
    const id = (res.body.task as { id?: string } | undefined)?.id
    return { status: res.status, id }
  } catch (err) {
    // the connection cut by the fault: the task may or may not have been stored
    return { status: 0, id: undefined, error: (err as Error).message }
  }
}

/** Every task of alice's organization, as the list shows them (newest first). */
export async function allTasks(stack: FullStack): Promise<FaultTask[]> {
  const tasks: FaultTask[] = []
  for (let offset = 0; ; offset += 100) {
    const page = await stack.call(stack.alice, 'GET', `/api/tasks?limit=100&offset=${offset}`)
    assert.equal(page.status, 200, page.text)
    const got = page.body.tasks as FaultTask[]
    tasks.push(...got)
    if (got.length < 100) return tasks
  }
}

/** Waits until `count` tasks are stored (listed), so that a fault comes while they run. */
export async function untilStored(stack: FullStack, count: number) {
  const deadline = Date.now() + 30_000
  while ((await allTasks(stack)).length < count) {
    if (Date.now() > deadline) throw new Error(`${count} tasks were not stored within 30 s`)
    await sleep(50)
  }
}

/**
 * Waits until every stored task has ended and every completed one's receipt is on the ledger (the
 * ledger's own entry at the index the rental names has the receipt's leaf hash), at most `ms`.
 * Answers the tasks as they ended; throws naming what had not, once the time is up.
 */
export async function allEndedAndReceipted(stack: FullStack, ms: number): Promise<FaultTask[]> {
  const deadline = Date.now() + ms
  const onLedger = new Set<string>()
  for (;;) {
    const tasks = await allTasks(stack).catch(() => undefined)
    const open = (tasks ?? []).filter((t) => !ENDED.has(t.state))
    const unreceipted = (tasks ?? []).filter(
      (t) => t.state === 'completed' && !onLedger.has(t.id) && (t.receipt?.ledger_index ?? null) === null,
    )
    for (const t of (tasks ?? []).filter((t) => t.state === 'completed' && !onLedger.has(t.id))) {
      const index = t.receipt?.ledger_index ?? null
      if (index === null) continue
      const entry = (await (await fetch(`${stack.ledger.url}/v1/entries/${index}`)).json()) as {
        leaf_hash?: string
      }
      assert.equal(entry.leaf_hash, t.receipt?.leaf_hash, `task ${t.id}: the ledger's entry is its receipt`)
      onLedger.add(t.id)
    }
    if (tasks && open.length === 0 && unreceipted.length === 0) return tasks
    if (Date.now() > deadline)
      throw new Error(
        `not within ${ms} ms: ${open.length} tasks not ended (${open
          .slice(0, 5)
          .map((t) => `${t.id} ${t.state} async=${t.async} ${t.message ?? ''}`)
          .join('; ')}), ${unreceipted.length} receipts not on the ledger`,
      )
    await sleep(250)
  }
}

/** Each completed task has one receipt of its own, and the escrow-holding tasks were receipted once. */
export function assertReceiptedOnce(tasks: FaultTask[]) {
  const receipts = tasks.flatMap((t) => (t.receipt ? [t.receipt.id] : []))
  assert.equal(new Set(receipts).size, receipts.length, 'no receipt is shared')
  for (const t of tasks) if (t.state === 'completed') assert.ok(t.receipt, `${t.id} completed with a receipt`)
}

/** The rental's outbox (what goes to the ledger) holds exactly one `task.completed` per completed task, none for others. */
export async function assertOneReceiptWritten(stack: FullStack, tasks: FaultTask[]) {
  const written = (await stack.db
    .selectFrom('receipt_outbox' as never)
    .select(['subject' as never])
    .where('receipt_type' as never, '=', 'task.completed' as never)
    .where('subject' as never, 'in', tasks.map((t) => t.id) as never)
    .execute()) as Array<{ subject: string }>
  const count = new Map<string, number>()
  for (const row of written) count.set(row.subject, (count.get(row.subject) ?? 0) + 1)
  for (const t of tasks)
    assert.equal(count.get(t.id) ?? 0, t.state === 'completed' ? 1 : 0, `${t.id}: its receipts written`)
}
