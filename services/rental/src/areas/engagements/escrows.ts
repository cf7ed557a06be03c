import type { RentalContext } from '../../context.ts'
import type { RentalDb } from '../../db.ts'
import type { BudgetService } from '../budgets/index.ts'
import * as store from './escrow-store.ts'
import { escrowForTask, escrowView } from './service.ts'
import type { EngagementRow, EscrowRow } from './store.ts'

/** What other areas may ask of escrows, the money that pays for an engagement's tasks (a `trx` keeps it in the caller's transaction). */
export interface EscrowService {
  /** Gives a new task its escrow (the package's first, or a new one to sign), in the task's transaction. */
  escrowForTask(
    trx: RentalDb,
    engagement: EngagementRow,
    taskId: string,
    now: Date,
  ): Promise<EscrowRow | undefined>
  escrowOfTask(taskId: string): Promise<EscrowRow | undefined>
  /** The escrows of several tasks, by task id. */
  escrowsOfTasks(taskIds: string[]): Promise<Map<string, EscrowRow>>
  escrowsOf(engagementId: string): Promise<EscrowRow[]>
  /** The organization's escrow by id or task id (refunds); `lock` takes it FOR UPDATE in `trx`. */
  escrowOfOrg(
    orgId: string,
    by: store.EscrowKey,
    at?: { trx: RentalDb; lock?: boolean },
  ): Promise<EscrowRow | undefined>
  /** The organization's opened escrows (a statement's escrow accounts). */
  openedEscrowsOfOrg(orgId: string): Promise<EscrowRow[]>
  escrowByHash(
    engagementId: string,
    hash: string,
    at?: { trx: RentalDb; lock?: boolean },
  ): Promise<EscrowRow | undefined>
  markReleased(
    trx: RentalDb,
    escrowId: string,
    released: Parameters<typeof store.markReleased>[2],
  ): Promise<void>
  releasesWith(orgId: string, agentDid: string): ReturnType<typeof store.releasesWith>
  /** Released escrows of one engagement or released in [from, to), for invoices (read in `db`, a transaction or not). */
  releasedEscrows(
    db: RentalDb,
    orgId: string,
    scope: Parameters<typeof store.releasedEscrows>[2],
  ): ReturnType<typeof store.releasedEscrows>
  escrowView: typeof escrowView
}

export function escrowService(ctx: RentalContext, budgets: Pick<BudgetService, 'commit'>): EscrowService {
  return {
    escrowForTask: (trx, engagement, taskId, now) => escrowForTask(budgets, trx, engagement, taskId, now),
    escrowOfTask: (taskId) => store.escrowOfTask(ctx.db, taskId),
    escrowsOfTasks: async (taskIds) =>
      new Map((await store.escrowsOfTasks(ctx.db, taskIds)).map((e) => [e.task_id!, e])),
    escrowsOf: (engagementId) => store.escrowsOf(ctx.db, engagementId),
    escrowOfOrg: (orgId, by, at) => store.escrowOfOrg(at?.trx ?? ctx.db, orgId, by, at?.lock),
    openedEscrowsOfOrg: (orgId) => store.openedEscrowsOfOrg(ctx.db, orgId),
    escrowByHash: (engagementId, hash, at) =>
      store.escrowByHash(at?.trx ?? ctx.db, engagementId, hash, at?.lock),
    markReleased: store.markReleased,
    releasesWith: (orgId, did) => store.releasesWith(ctx.db, orgId, did),
    releasedEscrows: store.releasedEscrows,
    escrowView,
  }
}
