import { defineArea } from '../../context.ts'
import { scheduleRoutes } from './routes.ts'
import { startScheduler } from './scheduler.ts'
import { type ScheduleDeps, scheduleList } from './service.ts'
import type { Page } from '@svc/kit'

/** What schedules offer other areas: their list (the tenant export). */
export interface ScheduleService {
  /** The organization's schedules, a page of them, as GET /api/schedules lists them. */
  list(orgId: string, page: Page): ReturnType<typeof scheduleList>
  /** Has this instance's scheduler look now (a schedule was made or resumed here). */
  wakeScheduler(): void
}

/**
 * Schedules: a task made for an engagement at each tick of a 5-field cron expression (croner) in
 * an IANA zone. Each instance's scheduler looks for due ticks; a tick is claimed in the transaction
 * that writes its task, so it makes one task whatever the instances; a rental that was down runs
 * one catch-up, not every missed tick. Table: schedules.
 */
export const schedulesArea = defineArea({
  name: 'schedules',
  needs: ['engagements', 'tasks', 'events'],
  mount(app, ctx, use): ScheduleService {
    const deps: ScheduleDeps = { ...ctx, engagements: use.engagements, tasks: use.tasks, events: use.events }
    const scheduler = startScheduler(deps)
    app.addHook('preClose', async () => scheduler.stop())
    return { list: (orgId, page) => scheduleList(deps, orgId, page), wakeScheduler: scheduler.wake }
  },
  routes(app, ctx, use, own) {
    scheduleRoutes(app, {
      ...ctx,
      engagements: use.engagements,
      tasks: use.tasks,
      events: use.events,
      wakeScheduler: own.wakeScheduler,
    })
  },
})
