/**
 * The rental's tasks in A2A 1.0 form, and the one query the A2A surface needs that the tasks
 * area does not have (a page of the owner's task ids filtered by engagement and state).
 */
import { type Artifact, Role, type Task, TaskState } from '@a2a-js/sdk'
import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import { escrowView } from '../engagements/service.ts'
import { type TaskView, terminal } from '../tasks/service.ts'
import { dataPart, textPart } from '@svc/kit/http/a2a-parts'

type RentalState = TaskView['state']

export const STATE_TO_A2A: Record<RentalState, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
}
const A2A_TO_STATE = new Map<TaskState, RentalState>(
  Object.entries(STATE_TO_A2A).map(([k, v]) => [v, k as RentalState]),
)

export const isTerminal = terminal

const parsed = (value: unknown) => {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value) as unknown
  } catch {
    return value
  }
}

/** The task's output as one artifact (text and data parts, the agent's signed result in metadata), while kept. */
export function outputArtifact(view: TaskView): Artifact | undefined {
  if (!view.output) return undefined
  return {
    artifactId: `${view.id}-output`,
    name: 'output',
    description: 'the agent’s output',
    parts: [
      ...(view.output.text !== null ? [textPart(view.output.text)] : []),
      dataPart(parsed(view.output.data)),
    ],
    metadata: {
      svc_result: parsed(view.agent_result),
      svc_signature: view.agent_signature,
    },
    extensions: [],
  }
}

export interface EscrowInfo {
  id: string
  state: string
  hash: string
  body: unknown
}

export async function escrowOfTask(db: RentalDb, taskId: string): Promise<EscrowInfo | null> {
  const row = await db.selectFrom('escrows').selectAll().where('task_id', '=', taskId).executeTakeFirst()
  if (!row) return null
  const view = escrowView(row)
  return { id: view.id, state: view.state, hash: view.hash, body: view.body }
}

export function statusOf(view: TaskView) {
  const timestamp = view.completed_at ?? view.started_at ?? view.created_at
  const note = view.state === 'failed' ? view.error : (view.message ?? null)
  return {
    state: STATE_TO_A2A[view.state],
    timestamp,
    message: note
      ? {
          messageId: `${view.id}-status`,
          contextId: view.engagement_id,
          taskId: view.id,
          role: Role.ROLE_AGENT,
          parts: [textPart(note)],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        }
      : undefined,
  }
}

/**
 * A rental task as an A2A Task: id = the rental task id, contextId = the engagement id, the state
 * mapped one to one, the output as an artifact while kept, and in metadata the receipt, the
 * escrow (with the body to sign while it is offered) and the hashes.
 */
export function a2aTask(view: TaskView, escrow: EscrowInfo | null, includeArtifacts = true): Task {
  const artifact = includeArtifacts ? outputArtifact(view) : undefined
  return {
    id: view.id,
    contextId: view.engagement_id,
    status: statusOf(view),
    artifacts: artifact ? [artifact] : [],
    history: [],
    metadata: {
      engagement_id: view.engagement_id,
      agent_did: view.agent_did,
      price_fils: view.price_fils,
      currency: view.currency,
      input_sha256: view.input_sha256,
      output_sha256: view.output_sha256,
      output_expires_at: view.output_expires_at,
      output_expired: view.output_expired,
      receipt: view.receipt,
      escrow,
      created_at: view.created_at,
    },
  }
}

export interface TaskFilter {
  engagementIds: string[] | null
  contextId?: string | undefined
  state?: TaskState | undefined
  /** Only tasks whose status time (completed, else started, else created) is after this. */
  statusAfter?: Date | undefined
}

/** Whether an A2A state filter names a state the rental has (the others match nothing). */
export const rentalStateOf = (state: TaskState) => A2A_TO_STATE.get(state)

function filtered(db: RentalDb, owner: string, filter: TaskFilter) {
  let query = db.selectFrom('tasks').where('client_subject', '=', owner)
  if (filter.engagementIds !== null)
    query =
      filter.engagementIds.length === 0
        ? query.where('id', '=', '')
        : query.where('engagement_id', 'in', filter.engagementIds)
  if (filter.contextId) query = query.where('engagement_id', '=', filter.contextId)
  if (filter.state !== undefined) {
    const state = rentalStateOf(filter.state)
    query = state ? query.where('state', '=', state) : query.where('id', '=', '')
  }
  if (filter.statusAfter)
    query = query.where(sql<Date>`coalesce(completed_at, started_at, created_at)`, '>', filter.statusAfter)
  return query
}

/** A page of the owner's task ids (newest first, as the tasks area lists) and the total. */
export async function taskIdPage(
  db: RentalDb,
  owner: string,
  filter: TaskFilter,
  limit: number,
  offset: number,
) {
  const rows = await filtered(db, owner, filter)
    .select('id')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute()
  const total = await filtered(db, owner, filter)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow()
  return { ids: rows.map((r) => r.id), total: Number(total.n) }
}
