import { randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { IdpDb } from '../../db.ts'
import { insertTask, spendUse, taskById, type TaskRow, tasksOfUser } from './store.ts'
import { idpError } from '../../errors.ts'

/** identity-provider.md, Limits. */
const MAX_USES = 1000
const MIN_TTL_S = 60
const MAX_TTL_S = 90 * 86_400
const MAX_CEILING_FIELDS = 8
const MAX_PURPOSE = 300

export const TASK_PARAMETERS = ['purpose', 'max_uses', 'grant_ttl', 'ceiling'] as const

export interface TaskRequest {
  purpose: string
  maxUses: number
  ttlS: number
  ceiling: Record<string, string | number | boolean> | null
}

const isScalar = (value: unknown) => ['string', 'number', 'boolean'].includes(typeof value)

function parseCeiling(text: string) {
  let ceiling: unknown
  try {
    ceiling = JSON.parse(text)
  } catch {
    return 'ceiling must be a JSON object'
  }
  if (typeof ceiling !== 'object' || ceiling === null || Array.isArray(ceiling))
    return 'ceiling must be a JSON object'
  const fields = Object.entries(ceiling)
  if (fields.length > MAX_CEILING_FIELDS) return `ceiling has at most ${MAX_CEILING_FIELDS} fields`
  if (!fields.every(([key, value]) => key.length <= 64 && isScalar(value)))
    return 'ceiling fields are short names with a string, number or boolean value'
  return ceiling as TaskRequest['ceiling']
}

const integerIn = (text: string, min: number, max: number) =>
  /^\d{1,10}$/.test(text) && Number(text) >= min && Number(text) <= max ? Number(text) : undefined

/**
 * identity-provider.md, /authorize 9: `purpose`, `max_uses` and `grant_ttl` all present or none,
 * `ceiling` only with them. A string is a refusal (`invalid_request`); undefined means no task.
 */
export function parseTask(query: Partial<Record<(typeof TASK_PARAMETERS)[number], string>>) {
  const { purpose, max_uses, grant_ttl, ceiling } = query
  const trio = [purpose, max_uses, grant_ttl]
  if (trio.every((p) => p === undefined))
    return ceiling === undefined ? undefined : 'ceiling comes only with purpose, max_uses and grant_ttl'
  if (trio.some((p) => p === undefined))
    return 'a task grant needs purpose, max_uses and grant_ttl together (ceiling is optional)'
  if (!purpose!.trim() || purpose!.length > MAX_PURPOSE)
    return `purpose must be 1 to ${MAX_PURPOSE} characters`
  const maxUses = integerIn(max_uses!, 1, MAX_USES)
  if (maxUses === undefined) return `max_uses must be an integer from 1 to ${MAX_USES}`
  const ttlS = integerIn(grant_ttl!, MIN_TTL_S, MAX_TTL_S)
  if (ttlS === undefined) return `grant_ttl must be a number of seconds from ${MIN_TTL_S} to ${MAX_TTL_S}`
  const parsed = ceiling === undefined ? null : parseCeiling(ceiling)
  if (typeof parsed === 'string') return parsed
  return { purpose: purpose!, maxUses, ttlS, ceiling: parsed } satisfies TaskRequest
}

export async function createTask(
  db: IdpDb,
  task: TaskRequest,
  owner: { user_id: string; client_id: string; resource: string | null },
) {
  const id = `tsk_${randomBytes(12).toString('base64url')}`
  await insertTask(db, {
    id,
    ...owner,
    purpose: task.purpose,
    max_uses: task.maxUses,
    ceiling: task.ceiling,
    expires_at: new Date(Date.now() + task.ttlS * 1000),
  })
  return id
}

/** The `tsk` claim (identity-provider.md, Task grant claim) once a use is spent. */
export const taskClaim = (row: TaskRow) => ({
  id: row.id,
  purpose: row.purpose,
  uses_left: row.max_uses - row.uses,
  exp: Math.floor(row.expires_at.getTime() / 1000),
  ...(row.ceiling ? { ceiling: row.ceiling } : {}),
  ...(row.resource ? { resource: row.resource } : {}),
})
export type TaskClaim = ReturnType<typeof taskClaim>

/** Spends a use for one more token, or refuses naming why the grant has ended. */
export async function spendTask(db: IdpDb, id: string): Promise<TaskRow | AppError> {
  const spent = await spendUse(db, id)
  if (spent) return spent
  const row = await taskById(db, id)
  const why = !row
    ? 'does not exist'
    : row.ended_at
      ? 'was ended by the user'
      : row.expires_at <= new Date()
        ? 'has expired'
        : 'is exhausted: every use is spent'
  return idpError('invalid_grant', `the task grant ${why}`)
}

export type { TaskRow } from './store.ts'

/** What other areas may ask of task grants (in the caller's db or transaction). */
export const tasksService = {
  byId: taskById,
  /** The account's grants, every one, oldest first (its data export). */
  allOf: tasksOfUser,
}
