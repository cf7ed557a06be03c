import { sql } from 'kysely'
import type { RentalDb } from '../../db.ts'
import type { TaskRow } from './store.ts'

/**
 * Task leases and the instances that hold them (docs/operations.md, Tasks after faults). Every
 * running task (`submitted` or `working`) has `lease_until`: while an instance runs its attempt,
 * `lease_owner` names it and the lease bounds the attempt; while its run job waits in the queue,
 * the owner is null and the lease bounds the wait. Times are the database's, the same for every
 * instance.
 */

const seconds = (s: number) => sql<Date>`now() + make_interval(secs => ${s})`

/** A rental instance as its row names it: `periodS`, the seconds between its heartbeats. */
export interface Instance {
  id: string
  address: string
  pid: number
  periodS: number
}

/**
 * This instance, heartbeating from now. An instance that listened at the same address before has
 * stopped (the address is this one's now): its leases are taken back at the next sweep rather than
 * once it would have been silent long enough.
 */
export async function registerInstance(db: RentalDb, instance: Instance) {
  await db
    .updateTable('rental_instances')
    .set({ stopped_at: sql`now()` })
    .where('address', '=', instance.address)
    .where('id', '!=', instance.id)
    .where('stopped_at', 'is', null)
    .execute()
  await db
    .deleteFrom('rental_instances')
    .where(sql<Date>`coalesce(stopped_at, heartbeat_at)`, '<', sql<Date>`now() - interval '1 day'`)
    .execute()
  await beat(db, instance).execute()
}

/** The instance's heartbeat (its row made again if it was forgotten). */
const beat = (db: RentalDb, instance: Instance) => {
  const { id, address, pid, periodS } = instance
  return db
    .insertInto('rental_instances')
    .values({ id, address, pid, period_s: periodS })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: sql`now()`, period_s: periodS }))
}

/** The instance stopped (its work drained): what it still holds is taken back at the next sweep. */
export const leaveInstances = (db: RentalDb, id: string) =>
  db
    .updateTable('rental_instances')
    .set({ stopped_at: sql`now()` })
    .where('id', '=', id)
    .execute()

/**
 * Running tasks whose lease passed, or whose owner stopped: `stopped_at` set, or silent for three
 * of its own periods. An owner without a row (its database was down when it started) keeps its
 * tasks until their lease passes; so does `self`, the instance asking, which knows its own runs
 * alive (its heartbeat may be stale after a database outage of its own).
 */
const takeable = (self: string) => sql<boolean>`(
  tasks.lease_until < now() or (tasks.lease_owner <> ${self} and exists (
    select 1 from rental_instances i where i.id = tasks.lease_owner
      and (i.stopped_at is not null or i.heartbeat_at < now() - make_interval(secs => i.period_s * 3)))))`

/**
 * Ids of running tasks whose lease may be taken back, oldest lease first; with `instance`, its
 * heartbeat is written by the same statement (the select sees the other instances' rows as before).
 * Its parameters are the instance's own, so the sweep compiles it once and runs it each period.
 */
export function takeableTasksQuery(db: RentalDb, self: string, limit: number, instance?: Instance) {
  const from: Pick<RentalDb, 'selectFrom'> = instance
    ? db.with('beat', (cte) => beat(cte as RentalDb, instance))
    : db
  return from
    .selectFrom('tasks')
    .select(['id', 'run_job'])
    .where('state', 'in', ['submitted', 'working'])
    .where('lease_until', 'is not', null)
    .where(takeable(self))
    .orderBy('lease_until')
    .limit(limit)
    .compile()
}

/**
 * The task, locked, when its lease may still be taken back (no other instance is taking it), and
 * whether its lease passed (else its owner stopped).
 */
export const lockTakeable = (trx: RentalDb, id: string, self: string) =>
  trx
    .selectFrom('tasks')
    .selectAll()
    .select(sql<boolean>`tasks.lease_until < now()`.as('lapsed'))
    .where('id', '=', id)
    .where('state', 'in', ['submitted', 'working'])
    .where('lease_until', 'is not', null)
    .where(takeable(self))
    .forUpdate()
    .skipLocked()
    .executeTakeFirst()

/**
 * The run job `jobId` takes the task's lease for one attempt; undefined when the task ended or
 * another job was named its run since (this one is stale). Jobs made before leases name none.
 */
export const claimRun = (db: RentalDb, id: string, jobId: string, owner: string, leaseS: number) =>
  db
    .updateTable('tasks')
    .set({ lease_owner: owner, lease_until: seconds(leaseS), run_job: jobId, retry_at: null })
    .where('id', '=', id)
    .where('state', 'in', ['submitted', 'working'])
    .where((eb) => eb.or([eb('run_job', '=', jobId), eb('run_job', 'is', null)]))
    .returningAll()
    .executeTakeFirst()

/**
 * The task's run is the job `jobId`, queued to start in `delayS` (async from now on): its lease is
 * the queue's until `delayS + slackS`; `retry_at` says when the attempt starts, for a retry.
 */
export const queueRun = (
  trx: RentalDb,
  id: string,
  jobId: string,
  delayS: number,
  slackS: number,
): Promise<Pick<TaskRow, 'retry_at'> | undefined> =>
  trx
    .updateTable('tasks')
    .set({
      async: true,
      run_job: jobId,
      lease_owner: null,
      lease_until: seconds(delayS + slackS),
      retry_at: delayS > 0 ? seconds(delayS) : null,
    })
    .where('id', '=', id)
    .returning(['retry_at'])
    .executeTakeFirst()

/** A queued run's lease made longer (its job still waits: a long queue). */
export const extendQueued = (trx: RentalDb, id: string, slackS: number) =>
  trx
    .updateTable('tasks')
    .set({ lease_until: seconds(slackS) })
    .where('id', '=', id)
    .execute()

/** The lease a sync run holds from its task's insert (`insertTask`'s values). */
export const syncLease = (owner: string, leaseS: number) => ({
  lease_owner: owner,
  lease_until: seconds(leaseS),
})

/** A sync run's task, locked, while this instance still runs it (not ended, not taken back). */
export const handOver = (trx: RentalDb, id: string, owner: string) =>
  trx
    .selectFrom('tasks')
    .select(['id', 'org_id', 'engagement_id'])
    .where('id', '=', id)
    .where('state', 'in', ['submitted', 'working'])
    .where('lease_owner', '=', owner)
    .forUpdate()
    .executeTakeFirst()
