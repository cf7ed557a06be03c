/**
 * The rental's tasks in A2A 1.0 form.
 */
import { type Artifact, Role, type Task, TaskState } from '@a2a-js/sdk'
import { type EngagementService, escrowView } from '../engagements/index.ts'
import { terminal } from '../tasks/index.ts'
import type { TaskView } from '../tasks/views.ts'
import { dataPart, textPart } from '@svc/kit/http/a2a-parts'

type RentalState = TaskView['state']

export const STATE_TO_A2A: Record<RentalState, TaskState> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  'input-required': TaskState.TASK_STATE_INPUT_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
  rejected: TaskState.TASK_STATE_REJECTED,
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

export async function escrowOfTask(
  engagements: EngagementService,
  taskId: string,
): Promise<EscrowInfo | null> {
  const row = await engagements.escrowOfTask(taskId)
  if (!row) return null
  const view = escrowView(row)
  return { id: view.id, state: view.state, hash: view.hash, body: view.body }
}

export function statusOf(view: TaskView) {
  const timestamp = view.completed_at ?? view.started_at ?? view.created_at
  const note = view.state === 'failed' || view.state === 'rejected' ? view.error : (view.message ?? null)
  return {
    state: STATE_TO_A2A[view.state],
    timestamp,
    message: note
      ? {
          messageId: `${view.id}-status`,
          contextId: contextOf(view),
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

/** The task's A2A context: its engagement, or for a trial's free task its trial. */
export const contextOf = (view: Pick<TaskView, 'engagement_id' | 'trial_id'>) =>
  view.engagement_id ?? view.trial_id ?? ''

/**
 * A rental task as an A2A Task: id = the rental task id, contextId = the engagement id, the state
 * mapped one to one, the output as an artifact while kept, and in metadata the receipt, the
 * escrow (with the body to sign while it is offered) and the hashes.
 */
export function a2aTask(view: TaskView, escrow: EscrowInfo | null, includeArtifacts = true): Task {
  const artifact = includeArtifacts ? outputArtifact(view) : undefined
  return {
    id: view.id,
    contextId: contextOf(view),
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

/** Whether an A2A state filter names a state the rental has (the others match nothing). */
export const rentalStateOf = (state: TaskState) => A2A_TO_STATE.get(state)
