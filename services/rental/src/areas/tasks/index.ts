import { randomUUID } from 'node:crypto'
import { guardedFetch } from '@svc/kit/http/guarded-fetch'
import { defineArea } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import { AgentCredentials } from './agent-credentials.ts'
import { AgentDispatcher, type AgentReply } from './dispatch.ts'
import { moved, reactingGate } from './gate.ts'
import { taskRoutes } from './routes.ts'

/** A task's response schema, as every route shows a task (the trials' tasks too). */
export { Task as TaskSchema, TaskWords } from './routes.ts'
import type { Actor } from '../events/index.ts'
import { endRunning, taskEvents } from './events.ts'
import type { MoneyLocale, Page } from '@svc/kit'
import { enqueueRun } from './attempts.ts'
import { startAgentCancels, tellAgent } from './agent-cancel.ts'
import {
  createTask,
  type NewTask,
  type NewTrialTask,
  type TaskDeps,
  type TaskTransaction,
} from './service.ts'
import { startTaskRunner } from './run.ts'
import {
  namesOf,
  taskDetail,
  type TaskLabel,
  taskLabels,
  taskList,
  taskView,
  type TaskView,
} from './views.ts'
import { clearTexts, eraseTexts } from './retention-store.ts'
import * as store from './store.ts'
import * as measures from './measures-store.ts'
export type { ExecutionRow, ExecutionSource } from './executions.ts'
export type { HeldScope, MessageMetadata, TaskDeps } from './service.ts'
export type { ApprovalGate, HeldTask, TaskEndHook } from './gate.ts'
export type { TaskLabel, TaskView } from './views.ts'
export { createTask, taskIdPage, terminal } from './service.ts'
export { firstWords, labelOf, taskDetail } from './views.ts'
export { cancelTask } from './cancel.ts'
export { CONCURRENCY_RETRY_AFTER_S } from './capacity.ts'
export { MAX_TASK_FILES } from './file-handoff.ts'
import { type ExecutionFilter, type ExecutionSource, executionPage, usageSince } from './executions.ts'
import { taskMetrics } from './metrics.ts'

export interface TaskService {
  /** What the A2A surface passes to createTask, taskDetail and cancelTask (its code calls them directly). */
  readonly deps: TaskDeps
  detail(subject: string, id: string): Promise<TaskView>
  /** The organization's tasks, a page of them, as GET /api/tasks lists them (the tenant export). */
  list(orgId: string, page: Page): ReturnType<typeof taskList>
  /**
   * A new task of the organization, by `actor` (a user, a token, a schedule, a batch): as POST /api/tasks.
   * `transaction`: the caller opens the transaction the task is written in (a schedule's tick claim).
   */
  create(
    orgId: string,
    input: NewTask | NewTrialTask,
    actor: Actor,
    transaction?: TaskTransaction,
  ): ReturnType<typeof createTask>
  /** A trial's tasks, oldest first, with their receipts (areas/trials). */
  ofTrial(trialId: string): ReturnType<typeof store.tasksOfTrial>
  /** The organization's tasks among `ids` as their views (output while kept; no ledger index, no escrow). */
  views(orgId: string, ids: string[]): Promise<TaskView[]>
  /** What names the organization's tasks among `ids` for a person, by id, in `lang` (executions, approvals). */
  labels(orgId: string, ids: readonly string[], lang: MoneyLocale): Promise<Map<string, TaskLabel>>
  /** The completed ones among these tasks, with their receipt. */
  completed(ids: string[]): ReturnType<typeof store.completedTasks>
  /** The states of these tasks, by id, in one query (a batch's running items). */
  statesOf(ids: string[]): Promise<Map<string, store.TaskRow['state']>>
  /** The task's state (in `trx`, as the caller's transaction sees it), or undefined. */
  stateOf(id: string, trx?: RentalDb): Promise<store.TaskRow['state'] | undefined>
  /** The client's tasks with the agent, oldest first. */
  tasksWith(subject: string, agentDid: string): ReturnType<typeof measures.tasksWith>
  /** The agent's ended tasks and those its agent failed, across all clients (insurance pricing). */
  failureRecord(agentDid: string): ReturnType<typeof measures.failureRecord>
  /** Counts and first/last activity with the agent, for one client or all. */
  stats(agentDid: string, subject?: string): ReturnType<typeof measures.taskStats>
  /** Fails the client's unfinished tasks with the agent, in `trx`, each with its event; answers their ids. */
  stopWith(
    trx: RentalDb,
    subject: string,
    agentDid: string,
    reason: string,
    at: Date,
    actor: Actor,
  ): Promise<string[]>
  /** The organization's tasks of an engagement (in `db`, a transaction or not), oldest first. */
  ofEngagement(db: RentalDb, orgId: string, engagementId: string): ReturnType<typeof store.tasksOfEngagement>
  /** Cancels the task as POST /api/tasks/{id}/cancel does, in `trx`; false when it had already ended. */
  cancelIn(trx: RentalDb, orgId: string, id: string, reason: string, actor: Actor): Promise<boolean>
  /** The SLA's windows of the engagement's ended tasks, as a part of the SLA's one read (areas/sla). */
  slaWindowsPart: typeof measures.slaWindowsPart
  /** Erasure: the organization's task texts and outputs wiped (hashes and receipts kept), in `trx`; how many tasks. */
  eraseTexts(trx: RentalDb, orgId: string): Promise<number>
  /** Retention: removes in `trx` the texts of the organization's tasks ended before `before` (held engagements skipped); their ids. */
  clearTexts(
    trx: RentalDb,
    orgId: string,
    before: Date,
    skipEngagements: readonly string[],
    limit: number,
  ): Promise<string[]>
  /** A keyset page of the organization's tasks and `also` sources' rows, newest first (GET /v1/executions). */
  executions(
    orgId: string,
    filter: ExecutionFilter,
    page: { limit: number; cursor?: string | undefined },
    also?: ExecutionSource[],
  ): ReturnType<typeof executionPage>
  /** The organization's tasks and spend since `since` (GET /v1/org's usage this month). */
  usageSince(orgId: string, since: Date): ReturnType<typeof usageSince>
  /** The task (any organization's) in `trx`, locked FOR UPDATE when asked. */
  taskById(trx: RentalDb, id: string, lock?: boolean): ReturnType<typeof store.taskById>
  /**
   * An approved waiting task back to `submitted`, its run enqueued in `trx` (with `reply`, the
   * answer to the agent's question on its A2A task); false when it is not `input-required`.
   */
  resume(trx: RentalDb, id: string, actor: Actor, reply?: AgentReply & { text: string }): Promise<boolean>
  /** A waiting task ends (rejected: by a member, or its approval expired); false when it is not waiting. */
  endWaiting(
    trx: RentalDb,
    id: string,
    end: Parameters<typeof store.endWaiting>[2],
    actor: Actor,
  ): Promise<boolean>
}

/**
 * Tasks: created under an active engagement with the escrow that pays for them, run on the
 * agent over A2A (sync within a timeout, else by a durable job with retries), completed with a
 * `task.completed` receipt in the same transaction, outputs kept for RENTAL_OUTPUT_TTL_S.
 * Table: tasks.
 */
export const tasksArea = defineArea({
  name: 'tasks',
  needs: ['auth', 'engagements', 'catalogue', 'outbox', 'events', 'market', 'files'],
  async mount(app, ctx, use): Promise<TaskService> {
    // the agents authenticate the rental with an idp access token for their URL (client credentials)
    const credentialsOf = (resource: string) =>
      new AgentCredentials({ link: use.auth.link, idpClient: ctx.config.idpClient, resource })
    const builtIn = credentialsOf(ctx.topology.agents.url)
    // external agents (market) whose card requires the rental's idp: a token for their resource each
    const external = new Map<string, AgentCredentials>()
    const credentials = async (url: string) => {
      if (builtIn.covers(url)) return builtIn
      const resource = await use.market.tokenResourceFor(url)
      if (resource === undefined) return undefined
      let found = external.get(resource)
      if (!found) external.set(resource, (found = credentialsOf(resource)))
      return found
    }
    // external agents (caller-given card URLs) under the market's address rules, as at listing
    const guard = guardedFetch({
      allowPrivate: ctx.config.market.allowPrivate,
      connectTimeoutMs: 5_000,
      timeoutMs: 5_000,
      maxRedirects: 3,
    })
    app.addHook('onClose', async () => guard.close())
    const ours = [ctx.topology.agents.url, ctx.baseUrl].map((u) => u.replace(/\/+$/, ''))
    const trusted = (url: string) => ours.some((base) => url === base || url.startsWith(`${base}/`))
    const { auth: _auth, ...services } = use
    const deps: TaskDeps = {
      ...ctx,
      ...services,
      dispatcher: new AgentDispatcher({ trusted, guarded: guard.fetch, credentials }),
      // what the areas that need tasks do for them (src/reactions.ts), read when a task runs
      approvals: reactingGate(ctx.reactions),
      held: async () => ctx.reactions.one('tasks.held')?.(),
      messageMetadata: ctx.reactions.all('tasks.message'),
      async ended(trx, task, actor) {
        for (const react of ctx.reactions.all('tasks.ended')) await react(trx, task, actor)
      },
      instance: randomUUID(),
      metrics: taskMetrics(app.metrics),
    }
    const runner = await startTaskRunner(app, deps)
    await startAgentCancels(deps)
    app.addHook('onClose', async () => runner.stop())
    return {
      deps,
      detail: (subject, id) => taskDetail(deps, subject, id),
      list: (orgId, page) => taskList(deps, orgId, page),
      create: (orgId, input, actor, transaction) => createTask(deps, orgId, input, actor, transaction),
      views: async (orgId, ids) => {
        const rows = await store.tasksOfIds(ctx.db, orgId, ids)
        const names = await namesOf(deps, rows, 'en')
        const views = []
        for (const row of rows)
          views.push(await taskView(deps, row, { ledgerIndex: null, escrow: undefined, names: names(row) }))
        return views
      },
      labels: (orgId, ids, lang) => taskLabels(deps, orgId, ids, lang),
      completed: (ids) => store.completedTasks(ctx.db, ids),
      ofTrial: (trialId) => store.tasksOfTrial(ctx.db, trialId),
      statesOf: async (ids) => new Map((await store.statesOf(ctx.db, ids)).map((t) => [t.id, t.state])),
      stateOf: async (id, trx) => (await store.taskById(trx ?? ctx.db, id))?.state,
      tasksWith: (subject, did) => measures.tasksWith(ctx.db, subject, did),
      stats: (did, subject) => measures.taskStats(ctx.db, did, subject),
      failureRecord: (did) => measures.failureRecord(ctx.db, did),
      async stopWith(trx, subject, did, reason, at, actor) {
        const stopped = await store.stopTasksWith(trx, subject, did, reason, at)
        const events = taskEvents(deps.events)
        for (const t of stopped)
          await events.stateChanged(trx, { id: t.id, orgId: subject, engagementId: t.engagement_id }, actor, {
            from: t.from,
            to: 'failed',
            error: reason,
          })
        for (const t of stopped)
          await deps.ended(
            trx,
            { id: t.id, orgId: subject, engagementId: t.engagement_id, state: 'failed' },
            actor,
          )
        for (const t of stopped) await tellAgent(deps, trx, t.id)
        return stopped.map((t) => t.id)
      },
      ofEngagement: (db, orgId, engagementId) => store.tasksOfEngagement(db, orgId, engagementId),
      async cancelIn(trx, orgId, id, reason, actor) {
        const end = { state: 'canceled' as const, error: reason, at: ctx.now(), cause: 'client' as const }
        const canceled = await endRunning(deps, trx, id, end, actor, orgId)
        if (canceled) await deps.approvals.taskEnded(trx, id, 'canceled', actor)
        return canceled !== undefined
      },
      slaWindowsPart: measures.slaWindowsPart,
      executions: (orgId, filter, page, also) => executionPage(ctx.db, orgId, filter, page, also),
      usageSince: (orgId, since) => usageSince(ctx.db, orgId, since),
      clearTexts: (trx, orgId, before, skip, limit) => clearTexts(trx, orgId, before, skip, limit, ctx.now()),
      eraseTexts: (trx, orgId) => eraseTexts(trx, orgId, ctx.now()),
      taskById: (trx, id, lock) => store.taskById(trx, id, lock),
      async resume(trx, id, actor, reply) {
        const task = await store.resumeWaiting(trx, id)
        if (!task) return false
        await moved(use.events, trx, task, actor, { from: 'input-required', to: 'submitted' })
        await enqueueRun(deps, trx, { task_id: id, ...(reply ? { reply } : {}) })
        return true
      },
      async endWaiting(trx, id, end, actor) {
        const task = await store.endWaiting(trx, id, end)
        if (!task) return false
        await moved(use.events, trx, task, actor, { from: 'input-required', to: end.state, error: end.error })
        await deps.ended(
          trx,
          { id: task.id, orgId: task.org_id, engagementId: task.engagement_id, state: end.state },
          actor,
        )
        await tellAgent(deps, trx, id)
        return true
      },
    }
  },
  routes(app, _ctx, _use, own) {
    taskRoutes(app, own.deps)
  },
})
