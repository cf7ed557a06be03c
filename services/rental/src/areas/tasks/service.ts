import { annotateSpan } from '@svc/kit'
import { agentInputHash } from '@svc/trust/agent-result'
import type { RentalContext } from '../../context.ts'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import { type EngagementRow, type EngagementService, type EscrowRow, newId } from '../engagements/index.ts'
import type { FileService } from '../files/index.ts'
import type { Actor, EventService } from '../events/index.ts'
import type { MarketService } from '../market/index.ts'
import type { OutboxService } from '../outbox/index.ts'
import { admitTask } from './capacity.ts'
import type { AgentDispatcher } from './dispatch.ts'
import { taskFiles } from './file-handoff.ts'
import type { ApprovalGate, TaskEndHook } from './gate.ts'
import { enqueueRun } from './attempts.ts'
import { syncLease } from './lease-store.ts'
import { runWithin, syncLeaseS } from './run.ts'
import { insertTask, type TaskRow, taskOf } from './store.ts'
import type { TaskMetrics } from './metrics.ts'
import * as taskStore from './store.ts'
import { namesOfTerms, taskView } from './views.ts'

export const RUN_QUEUE = 'rental.tasks.run'

/** What the tasks' rules work with: the context, the services of the areas tasks need, the A2A dispatcher. */
export interface TaskDeps extends RentalContext {
  engagements: EngagementService
  catalogue: CatalogueService
  outbox: OutboxService
  events: EventService
  dispatcher: AgentDispatcher
  market: Pick<MarketService, 'checkCapacity'>
  /** The engagement's files a task hands its agent (file_ids). */
  files: Pick<FileService, 'ofEngagement' | 'open'>
  /** The approvals area's gate (its `tasks.gate` reaction; without it nothing is held). */
  approvals: ApprovalGate
  /** What legal holds cover (the retention area's `tasks.held` reaction; undefined without it): their outputs are not purged. */
  held: () => Promise<{ orgs: string[]; engagements: string[] } | undefined>
  /** More of the message's metadata for a task's run (`tasks.message` reactions): the tool-call credential (areas/connect), a team task's delegation credential (areas/teams). */
  messageMetadata: readonly MessageMetadata[]
  /** Called in the task's transaction when an engagement's task fails, is canceled or rejected (`tasks.ended` reactions: areas/ending). */
  ended: TaskEndHook
  /** This process's id among the rental's instances: the owner of the task leases it holds. */
  instance: string
  metrics?: TaskMetrics
}

/** The organizations and engagements legal holds cover now. */
export type HeldScope = () => Promise<{ orgs: string[]; engagements: string[] }>

/**
 * More of the message an agent gets for a task: metadata to add, or undefined. `engagement`: the
 * task's engagement as its run read it (its signed SLA, its `message_parts`), undefined for a
 * trial's task: what an area adds is known from it, without a read of its own (issue 34).
 */
export type MessageMetadata = (
  task: TaskRow,
  engagement: EngagementRow | undefined,
) => Promise<Record<string, string> | undefined>

/** What a new task is: its engagement and text; async runs it by a job, sync waits for it a while. */
export interface NewTask {
  engagement_id: string
  text: string
  async?: boolean | undefined
  /** Files of the engagement handed to the agent as A2A file parts (signed, short-lived URLs). */
  file_ids?: string[] | undefined
}

/**
 * A trial's free task (areas/trials): no engagement, no escrow, price 0, the trial's agent. The
 * trials area counts it against the trial in the `transaction` it passes (the trial row locked).
 */
export interface NewTrialTask {
  trial_id: string
  agent_did: string
  text: string
  async?: boolean | undefined
}

/**
 * How a new task's rows are written: `write` in a transaction. By default one of its own; a
 * schedule's tick writes them in the transaction that claims the tick (and learns the task's id).
 */
export type TaskTransaction = (taskId: string, write: (trx: RentalDb) => Promise<void>) => Promise<unknown>

export const terminal = (state: TaskRow['state']) =>
  state === 'completed' || state === 'failed' || state === 'canceled' || state === 'rejected'

/** An engagement with its config, as `termsOf` reads it. */
export type EngagementTerms = NonNullable<Awaited<ReturnType<EngagementService['termsOf']>>>

/**
 * The engagement a new task runs under, read once in the task's transaction with its row shared
 * (an end, a new config or new limits wait for this task's transaction, and it for theirs, while
 * the engagement's other new tasks go side by side), with its config, whether its agent is revoked
 * and its names: the organization's, active, its agent not revoked, its price within its limit,
 * then the text and the files checked, in that order.
 */
async function engagementForTask(
  deps: TaskDeps,
  trx: RentalDb,
  subject: string,
  input: NewTask,
  fileIds: string[],
) {
  const terms = await deps.engagements.termsOf(subject, input.engagement_id, {
    trx,
    lock: 'share',
    revoked: true,
    names: true,
    // the agent's card URL: the run calls it with no read of its own
    cardUrl: true,
    // the agent's listing when limited: the capacity check reads nothing for any other
    listing: true,
  })
  if (!terms) throw rentalError('engagement_not_found', `no engagement ${input.engagement_id}`)
  checkTaskable(terms.engagement.state)
  if (terms.agentRevoked) throw agentRevoked(terms.engagement.agent_did)
  deps.engagements.checkTaskPrice(terms.engagement, terms.config)
  checkText(input.text)
  if (fileIds.length) await taskFiles(deps, subject, terms.engagement.id, fileIds, trx)
  return terms
}

const agentRevoked = (did: string) => rentalError('agent_revoked', `you revoked ${did}: it takes no new task`)

function checkText(text: string) {
  if (text.length === 0) throw rentalError('invalid_text', 'text is empty')
}

/** 409 unless the engagement takes new tasks: `engagement_ended` once ended, else `engagement_not_active`. */
function checkTaskable(state: string) {
  if (state === 'ended')
    throw rentalError('engagement_ended', 'the engagement is ended: it takes no new task')
  if (state !== 'active')
    throw rentalError('engagement_not_active', `the engagement is ${state}: sign its SLA first`)
}

/**
 * A new task under an active engagement, with the escrow that pays for it: the engagement's first
 * task takes the package's escrow; each later task gets a new escrow body to sign. Async: a job
 * runs it. Sync: run here, waited for up to RENTAL_TASK_TIMEOUT_MS, then carried on by the job.
 * A trial's task (NewTrialTask) has neither engagement nor escrow, and is never held for approval.
 */
export async function createTask(
  deps: TaskDeps,
  subject: string,
  input: NewTask | NewTrialTask,
  actor: Actor,
  transaction: TaskTransaction = (_id, write) => inTransaction(deps.db, write),
) {
  const trialId = 'trial_id' in input ? input.trial_id : null
  if ('trial_id' in input) {
    if (await deps.engagements.isRevoked(subject, input.agent_did)) throw agentRevoked(input.agent_did)
    checkText(input.text)
  }
  const fileIds = 'file_ids' in input && input.file_ids?.length ? [...new Set(input.file_ids)] : []
  const id = newId('tsk')
  const now = deps.now()
  const isAsync = input.async === true
  let held = false
  let escrow: EscrowRow | undefined
  let inserted: TaskRow | undefined
  let terms: EngagementTerms | undefined
  await transaction(id, async (trx) => {
    terms = 'engagement_id' in input ? await engagementForTask(deps, trx, subject, input, fileIds) : undefined
    const engagement = terms?.engagement
    const agentDid = engagement?.agent_did ?? (input as NewTrialTask).agent_did
    const price = engagement ? Number(engagement.price_fils) : 0
    if (engagement) {
      // capacity: the limits as of that lock, counted one creation at a time (429 capacity_exceeded)
      await admitTask(deps, trx, engagement)
      // approvals: the engagement's policy (as of that lock) may hold the task for a member's decision
      held = deps.approvals.holds(terms!.config.approval, price)
    }
    // a limited listing's cap on the agent's running tasks, trial tasks too (429 listing_at_capacity)
    await deps.market.checkCapacity(
      trx,
      agentDid,
      () => taskStore.runningWith(trx, agentDid),
      terms?.limitedListingId,
    )
    const state = held ? 'input-required' : isAsync ? 'submitted' : 'working'
    // the task and its `task.created` event in one statement
    const created = await deps.events.recordBeside(
      trx,
      {
        orgId: subject,
        type: 'task.created',
        stream: id,
        subjects: engagement
          ? { task_id: id, engagement_id: engagement.id }
          : { task_id: id, trial_id: trialId! },
        actor,
        data: { state, async: isAsync, price_fils: price, ...(trialId ? { trial: true } : {}) },
      },
      insertTask(trx, {
        id,
        engagement_id: engagement?.id ?? null,
        trial_id: trialId,
        org_id: subject,
        agent_did: agentDid,
        state,
        async: isAsync,
        price_fils: price,
        input_text: input.text,
        input_sha256: agentInputHash([input.text]),
        started_at: state === 'working' ? now : null,
        agent_version: engagement?.agent_version ?? null,
        file_ids: fileIds,
        // a sync run is this instance's until its lease passes (then the sweep takes it back)
        lease: state === 'working' ? syncLease(deps.instance, syncLeaseS(deps)) : undefined,
      }),
    )
    inserted = created.row
    annotateSpan({ 'svc.task.id': id, 'svc.engagement.id': engagement?.id ?? '', 'svc.org.id': subject })
    deps.metrics?.created(isAsync)
    if (engagement) escrow = await deps.engagements.escrowForTask(trx, engagement, id, now)
    if (held && engagement)
      await deps.approvals.request(trx, {
        id,
        orgId: subject,
        engagementId: engagement.id,
        priceFils: price,
        text: input.text,
        actor,
      })
    else if (isAsync) await enqueueRun(deps, trx, { task_id: id })
  })
  const ran = !isAsync && !held ? await runWithin(deps, inserted!, actor, terms) : {}
  // the row the run completed (RETURNING), else as it is now
  const row = ran.completed ?? (await taskOf(deps.db, subject, id))
  if (!row) throw rentalError('task_not_found', `no task ${id}`)
  const note = ran.note
  // the receipt was recorded a moment ago, in the task's transaction: its ledger index is not
  // known yet (the view says so; GET /api/tasks/{id} shows it once the ledger has it)
  return {
    // the names from the engagement's read above: none read again
    task: await taskView(deps, row, { ledgerIndex: null, escrow, names: terms && namesOfTerms(terms) }),
    escrow: escrow ? deps.engagements.escrowView(escrow) : null,
    ...(note ? { message: note } : {}),
  }
}

export type TaskFilter = taskStore.TaskFilter

/** A page of the owner's task ids, filtered (the A2A ListTasks), newest first, and the total. */
export const taskIdPage = (
  deps: TaskDeps,
  owner: string,
  filter: TaskFilter,
  limit: number,
  offset: number,
) => taskStore.taskIdPage(deps.db, owner, filter, limit, offset)
