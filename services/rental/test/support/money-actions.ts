import { b64uEncode } from '@svc/trust/base64url'
import { type Ed25519KeyPair, signEd25519 } from '@svc/trust/ed25519'
import { canonicalBytes } from '@svc/trust/jcs'
import type { Client, FullStack } from './full-stack.ts'
import { eventually } from './stack.ts'

/** What a client does with money through the HTTP API, as a person would: the money tests' steps. */

export const signWith = (key: Ed25519KeyPair) => (body: unknown) =>
  b64uEncode(signEd25519(key.seed, canonicalBytes(body)))

export interface TaskMade {
  id: string
  state: string
  escrow: { id: string; hash: string; state: string; amount_fils: number } | null
}

/** A task on the engagement; its escrow signed (opened: the money moves into escrow) when it is offered and `sign`. */
export async function newTask(
  s: FullStack,
  who: Client,
  engagementId: string,
  key: Ed25519KeyPair,
  text: string,
  sign = true,
): Promise<TaskMade> {
  const res = await s.call(who, 'POST', '/api/tasks', { engagement_id: engagementId, text })
  if (res.status !== 200) throw new Error(`task: ${res.status} ${res.text}`)
  const task = res.body.task as { id: string; state: string }
  const escrow = res.body.escrow as (TaskMade['escrow'] & { body: unknown }) | null
  if (sign && escrow && escrow.state === 'offered') {
    const signed = await s.call(who, 'POST', `/api/engagements/${engagementId}/signatures`, {
      escrow_signatures: [{ escrow_hash: escrow.hash, signature: signWith(key)(escrow.body) }],
    })
    if (signed.status !== 200) throw new Error(`escrow: ${signed.status} ${signed.text}`)
    escrow.state = 'open'
  }
  return { id: task.id, state: task.state, escrow }
}

/** The task once it has ended (or left `submitted`/`working`), as GET /api/tasks/{id} answers it. */
export async function endedTask(s: FullStack, who: Client, id: string) {
  let task: { state: string; error: string | null } = { state: '', error: null }
  await eventually(`task ${id} ends`, async () => {
    task = (await s.call(who, 'GET', `/api/tasks/${id}`)).body as typeof task
    return !['submitted', 'working'].includes(task.state)
  })
  return task
}

/** Releases every escrow of the engagement whose task completed, signed with `key`; how many. */
export async function releaseCompleted(s: FullStack, who: Client, engagementId: string, key: Ed25519KeyPair) {
  const pending = await s.call(who, 'GET', `/api/engagements/${engagementId}/releases/pending`)
  let released = 0
  for (const r of (pending.body.releases ?? []) as Array<{
    escrow: { hash: string }
    instruction: unknown
  }>) {
    const res = await s.call(who, 'POST', `/api/engagements/${engagementId}/releases`, {
      escrow_hash: r.escrow.hash,
      instruction: { body: r.instruction, signature: signWith(key)(r.instruction) },
    })
    if (res.status === 200) released++
  }
  return released
}

/** An operator moves `amount` of the platform's fees into the insurance reserve (201), or its refusal. */
export const fundReserve = (s: FullStack, operator: Client, amount: number) =>
  s.call(operator, 'POST', '/api/insurance/reserve', { amount_fils: amount })

/** The operator's view of the insurance funds, in fils. */
export async function insuranceFunds(s: FullStack, operator: Client) {
  const res = await s.call(operator, 'GET', '/api/insurance/funds')
  if (res.status !== 200) throw new Error(`funds: ${res.status} ${res.text}`)
  const f = res.body as Record<string, { amount_fils: number }>
  return {
    pool: f.pool!.amount_fils,
    reserve: f.reserve!.amount_fils,
    exposure: f.exposure!.amount_fils,
    available: f.available!.amount_fils,
    fees: f.fees!.amount_fils,
  }
}

/** A quote and its purchase: the policy, or the refusal of whichever step refused. */
export async function quoteAndBuy(
  s: FullStack,
  who: Client,
  engagementId: string,
  body: Record<string, unknown> = {},
) {
  const quote = await s.call(who, 'POST', `/api/engagements/${engagementId}/insurance/quote`, body)
  if (quote.status !== 201) return { quote, bought: undefined }
  const bought = await s.call(who, 'POST', `/api/engagements/${engagementId}/insurance`, {
    quote_id: quote.body.id,
  })
  return { quote, bought }
}
