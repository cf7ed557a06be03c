import { inTransaction } from '../../db.ts'
import { SYSTEM } from '../events/index.ts'
import { idsDigest, policyOf, type RetentionDeps } from './service.ts'
import * as store from './store.ts'

export const SWEEP_QUEUE = 'retention.sweep'

/** Rows of each kind deleted per organization per transaction; the rest waits for the next run. */
const BATCH = 500
const ORG_PAGE = 200

/**
 * One organization's expired data, deleted in one transaction through each owning area: tasks'
 * texts and outputs cleared, files crypto-shredded (each with its `file.deleted` receipt), events
 * every durable consumer has passed deleted; with a `data.retention.deleted` receipt (counts, and
 * the SHA-256 of each kind's deleted ids) and a `retention.deleted` event when anything went.
 * Nothing under an organization-wide hold; a held engagement's tasks, files and events are skipped.
 */
export async function sweepOrg(deps: RetentionDeps, orgId: string) {
  const holds = await store.activeHolds(deps.ctx.db, orgId)
  if (holds.some((h) => h.engagement_id === null)) return { held: true, deleted: 0 }
  const skip = [...new Set(holds.map((h) => h.engagement_id!))]
  const policy = await policyOf(deps.ctx.db, orgId)
  const now = deps.ctx.now()
  const before = (s: number) => new Date(now.getTime() - s * 1000)
  const cutoffs = {
    tasks: before(policy.tasks_s),
    files: before(policy.files_s),
    events: before(policy.events_s),
  }
  return inTransaction(deps.ctx.db, async (trx) => {
    // a hold placed since the look above: the transaction sees it and deletes nothing it covers
    const standing = await store.activeHolds(trx, orgId)
    if (standing.some((h) => h.engagement_id === null)) return { held: true, deleted: 0 }
    const held = [...new Set([...skip, ...standing.map((h) => h.engagement_id!)])]
    // events first: the file.deleted events written below are this run's own record, never expired
    const events = await deps.events.deleteExpired(trx, orgId, cutoffs.events, held, BATCH)
    const tasks = await deps.tasks.clearTexts(trx, orgId, cutoffs.tasks, held, BATCH)
    const files = await deps.files.shredExpired(trx, orgId, SYSTEM, cutoffs.files, held, BATCH)
    const deleted = tasks.length + files.length + events.length
    if (deleted === 0) return { held: false, deleted }
    const counted = (ids: string[]) => ({ count: ids.length, ids_sha256: idsDigest(ids) })
    const data = {
      org_id: orgId,
      policy: { tasks_s: policy.tasks_s, files_s: policy.files_s, events_s: policy.events_s },
      before: {
        tasks: cutoffs.tasks.toISOString(),
        files: cutoffs.files.toISOString(),
        events: cutoffs.events.toISOString(),
      },
      tasks: counted(tasks),
      files: counted(files),
      events: counted(events),
      held_engagements: held.length,
    }
    const receipt = await deps.ctx.receipts.record(trx, {
      type: 'data.retention.deleted',
      subject: orgId,
      data: { record: 'retention', ...data },
    })
    await deps.events.record(trx, {
      orgId,
      type: 'retention.deleted',
      actor: SYSTEM,
      data: { ...data, receipt_id: receipt.id },
    })
    return { held: false, deleted }
  })
}

/** One run: every organization, a page at a time; one organization's failure is logged and does not stop the others. */
export async function sweep(deps: RetentionDeps) {
  let deleted = 0
  for (let after = ''; ;) {
    const ids = await deps.orgs.idsAfter(after, ORG_PAGE)
    for (const orgId of ids) {
      try {
        // an organization with more than a batch of expired rows is visited again at once
        for (let round = 0; round < 20; round++) {
          const done = await sweepOrg(deps, orgId)
          deleted += done.deleted
          if (done.deleted < BATCH) break
        }
      } catch (err) {
        deps.ctx.log.warn(
          { org_id: orgId, err: (err as Error).message },
          'retention run failed for an organization',
        )
      }
    }
    if (ids.length < ORG_PAGE) return deleted
    after = ids[ids.length - 1]!
  }
}

/**
 * Keeps one chain of runs: the row `retention_sweep` names the pending run's job. At start a run is
 * enqueued unless the named one is still waiting or running; each run enqueues the next (in the
 * transaction that names it), so instances starting together, or a stray job, make no second chain.
 */
export async function startSweeps(deps: RetentionDeps) {
  const { jobs } = deps.ctx
  const every = deps.ctx.config.retentionSweepS
  await jobs.queue(SWEEP_QUEUE, { retryLimit: 3, expireInSeconds: 15 * 60 })
  const schedule = async (current: string | null) =>
    inTransaction(deps.ctx.db, async (trx) => {
      const row = await store.sweepRow(trx)
      if (row.job_id !== current) return
      const id = await jobs.enqueue(trx, SWEEP_QUEUE, {}, { startAfter: every })
      await store.setSweep(trx, { job_id: id, ...(current ? { last_run_at: deps.ctx.now() } : {}) })
    })
  await jobs.work(SWEEP_QUEUE, async (_data, job) => {
    // a stray run (not the chain's) does nothing; the chain's run sweeps, then enqueues the next
    if ((await store.sweepJobId(deps.ctx.db)) !== job.id) return
    try {
      const deleted = await sweep(deps)
      if (deleted) deps.ctx.log.info({ deleted }, 'retention: expired data deleted')
    } catch (err) {
      deps.ctx.log.warn({ err: (err as Error).message }, 'retention run failed')
    }
    await schedule(job.id)
  })
  const pending = await store.sweepJobId(deps.ctx.db)
  const job = pending ? await jobs.job(SWEEP_QUEUE, pending) : null
  if (!job || !['created', 'retry', 'active'].includes(job.state)) await schedule(pending)
}
