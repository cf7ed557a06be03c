import { type App, pageOf, pageQuery } from '@svc/kit'
import { Type } from 'typebox'
import { actorOfRequest } from '../events/index.ts'
import {
  createSchedule,
  deleteSchedule,
  pauseSchedule,
  resumeSchedule,
  type ScheduleDeps,
  scheduleDetail,
  scheduleList,
} from './service.ts'
import { Nullable, orgOf, route } from '../../http/index.ts'

const Schedule = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  engagement_id: Type.String(),
  text: Type.String(),
  cron: Type.String({ description: '5 fields: minute hour day-of-month month day-of-week' }),
  timezone: Type.String({ description: 'the IANA zone the expression is read in' }),
  state: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
  paused_reason: Nullable(
    Type.String({ description: 'why the scheduler paused it (its task could not be made); null otherwise' }),
  ),
  next_runs: Type.Array(Type.String(), { description: 'the next 5 ticks, UTC (none while paused)' }),
  fired_count: Type.Integer(),
  failed_count: Type.Integer(),
  missed_count: Type.Integer({ description: 'ticks skipped by catch-ups, in all' }),
  last_tick_at: Nullable(Type.String()),
  last_fired_at: Nullable(Type.String()),
  last_task_id: Nullable(Type.String()),
  last_error: Nullable(Type.Object({ message: Type.String(), at: Type.String() })),
  catch_up: Nullable(
    Type.Object(
      { tick_at: Type.String(), missed: Type.Integer(), caught_up_at: Type.String() },
      { description: 'the last catch-up: one late run for the tick, the ticks after it skipped' },
    ),
  ),
  created_at: Type.String(),
  updated_at: Type.String(),
})

const ScheduleId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })

export function scheduleRoutes(app: App, deps: ScheduleDeps) {
  const tags = ['schedules']
  app.post(
    '/api/schedules',
    {
      ...route.csrf('schedules:write'),
      schema: {
        summary:
          'A schedule: a task for the engagement at each tick of a 5-field cron expression in a time zone',
        description:
          'A bad expression (not 5 fields, or one croner refuses) is 400 `invalid_cron`, a zone that is not an IANA name 400 `invalid_timezone`; the engagement must be active.',
        tags,
        body: Type.Object(
          {
            engagement_id: Type.String({ minLength: 1, maxLength: 100 }),
            text: Type.String({ minLength: 1, maxLength: 20_000 }),
            cron: Type.String({ minLength: 1, maxLength: 100 }),
            timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'UTC' })),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Schedule },
      },
    },
    async (request) => createSchedule(deps, orgOf(request), request.body, actorOfRequest(request)),
  )
  app.get(
    '/api/schedules',
    {
      ...route.session('schedules:read'),
      schema: {
        summary: 'The organization’s schedules, oldest first',
        tags,
        querystring: pageQuery(),
        response: {
          200: Type.Object({
            schedules: Type.Array(Schedule),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => scheduleList(deps, orgOf(request), pageOf(request.query)),
  )
  app.get(
    '/api/schedules/:id',
    {
      ...route.session('schedules:read'),
      schema: {
        summary: 'A schedule: its next ticks, state, last run and catch-up',
        tags,
        params: ScheduleId,
        response: { 200: Schedule },
      },
    },
    async (request) => scheduleDetail(deps, orgOf(request), request.params.id),
  )
  app.delete(
    '/api/schedules/:id',
    {
      ...route.csrf('schedules:write'),
      schema: {
        summary: 'Deletes a schedule: no more ticks, and it is not found afterwards',
        tags,
        params: ScheduleId,
        response: { 200: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }) },
      },
    },
    async (request) => deleteSchedule(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
  app.post(
    '/api/schedules/:id/pause',
    {
      ...route.csrf('schedules:write'),
      schema: {
        summary: 'Pauses an active schedule (409 naming the state otherwise): no tick runs while paused',
        tags,
        params: ScheduleId,
        response: { 200: Schedule },
      },
    },
    async (request) => pauseSchedule(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
  app.post(
    '/api/schedules/:id/resume',
    {
      ...route.csrf('schedules:write'),
      schema: {
        summary:
          'Resumes a paused schedule from now (409 naming the state otherwise): the ticks it was paused over do not run',
        tags,
        params: ScheduleId,
        response: { 200: Schedule },
      },
    },
    async (request) => resumeSchedule(deps, orgOf(request), request.params.id, actorOfRequest(request)),
  )
}
