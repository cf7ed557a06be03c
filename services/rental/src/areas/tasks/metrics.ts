import { Counter, Histogram, type Registry } from '@svc/kit'

/** The tasks' Prometheus metrics: how many are made, and how long those that ended took. */
export interface TaskMetrics {
  created(async: boolean): void
  /** A task that reached `state`, made at `createdAt`. */
  ended(state: 'completed' | 'failed', createdAt: Date, at: Date): void
}

export function taskMetrics(registry: Registry): TaskMetrics {
  const created = new Counter({
    name: 'rental_tasks_created_total',
    help: 'Tasks created (console, tenant API and A2A), sync or async',
    labelNames: ['mode'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'rental_task_duration_seconds',
    help: 'From a task’s creation to its end (completed, or failed by its agent’s result)',
    labelNames: ['state'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [registry],
  })
  return {
    created: (async) => created.inc({ mode: async ? 'async' : 'sync' }),
    ended: (state, createdAt, at) =>
      duration.observe({ state }, Math.max(0, at.getTime() - createdAt.getTime()) / 1000),
  }
}
