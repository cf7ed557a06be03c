import { defineArea } from '../../context.ts'
import { batchRoutes } from './routes.ts'
import { type BatchDeps, batchDetail, type BatchView, resumeBatches, startBatchRunner } from './service.ts'

export interface BatchService {
  /** What the routes work with. */
  readonly deps: BatchDeps
  /** The organization's batch, as GET /api/batches/{id} shows it. */
  detail(orgId: string, id: string): Promise<BatchView>
}

/**
 * Batches: up to 1000 task texts under one engagement, each made a task (actor: the batch) with
 * bounded concurrency by durable tick jobs; an item's task is linked in the task's own transaction,
 * so a crash never runs an item twice. Progress is recorded as events; the export is JSON Lines or CSV.
 * Tables: rental_batches, rental_batch_items.
 */
export const batchesArea = defineArea({
  name: 'batches',
  needs: ['engagements', 'events', 'tasks'],
  async mount(_app, ctx, use): Promise<BatchService> {
    const deps: BatchDeps = { ...ctx, ...use }
    await startBatchRunner(deps)
    await resumeBatches(deps)
    return { deps, detail: (orgId, id) => batchDetail(deps, orgId, id) }
  },
  routes(app, _ctx, _use, own) {
    batchRoutes(app, own.deps)
  },
})
