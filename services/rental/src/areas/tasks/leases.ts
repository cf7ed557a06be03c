import { hostname } from 'node:os'
import type { AddressInfo } from 'node:net'
import type { App } from '@svc/kit'
import { inTransaction } from '../../db.ts'
import { runJobOf, takeBack } from './attempts.ts'
import {
  type Instance,
  leaveInstances,
  lockTakeable,
  registerInstance,
  takeableTasksQuery,
} from './lease-store.ts'
import type { TaskDeps } from './service.ts'

/** Tasks taken back per transaction round of a sweep. */
const SWEEP_BATCH = 50

/**
 * The instance's heartbeat and the sweep of task leases (docs/operations.md, Tasks after faults).
 * Once the server listens the instance registers (an instance that listened at its address before
 * has stopped) and sweeps at once; then every RENTAL_TASK_SWEEP_S it heartbeats and sweeps again.
 * A sweep takes back the running tasks whose lease passed or whose instance stopped (silent for
 * three of its periods, or known stopped), each in a transaction of its own with the row locked, skipping
 * a row another instance is taking.
 */
export function startLeases(app: App, deps: TaskDeps) {
  const periodS = deps.config.taskSweepS
  const look = takeableTasksQuery(deps.db, deps.instance, SWEEP_BATCH)
  /** The heartbeat written by the look's own statement, compiled once the instance's address is known. */
  let beatAndLook: typeof look | undefined
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  let stopped = false
  const warn = (what: string) => (err: Error) => deps.log.warn({ err: err.message }, what)

  /** `first`: the first round's statement (the heartbeat's, each period). */
  const sweep = async (first = look) => {
    // a bounded number of rounds: a task that cannot be taken back now waits for the next sweep
    for (let round = 0; round < 20; round++) {
      const { rows: ids } = await deps.db.executeQuery(round === 0 ? first : look)
      for (const { id, run_job } of ids) {
        const run = await runJobOf(deps, run_job)
        await inTransaction(deps.db, async (trx) => {
          const task = await lockTakeable(trx, id, deps.instance)
          if (!task) return
          const outcome = await takeBack(deps, trx, task, !task.lapsed, run)
          if (outcome && outcome !== 'waiting')
            deps.log.info({ task: id, owner: task.lease_owner, outcome }, 'task lease taken back')
        }).catch(warn('task lease not taken back'))
      }
      if (ids.length < SWEEP_BATCH) return
    }
  }
  // one statement per period at rest: the heartbeat and the sweep's look
  const tick = () => sweep(beatAndLook).catch(warn('task lease sweep (and heartbeat) failed'))
  const next = () => {
    if (stopped) return
    timer = setTimeout(() => {
      running = tick().finally(next)
    }, periodS * 1000)
    timer.unref()
  }

  app.addHook('onListen', async () => {
    const { port } = app.server.address() as AddressInfo
    const instance: Instance = {
      id: deps.instance,
      address: `${hostname()}:${port}`,
      pid: process.pid,
      periodS,
    }
    beatAndLook = takeableTasksQuery(deps.db, deps.instance, SWEEP_BATCH, instance)
    await registerInstance(deps.db, instance).catch(warn('instance not registered'))
    // in the background: what a killed process at this address held is taken back now
    running = sweep().catch(warn('task lease sweep failed')).finally(next)
  })
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
      await leaveInstances(deps.db, deps.instance).catch(warn('instance not marked stopped'))
    },
  }
}
