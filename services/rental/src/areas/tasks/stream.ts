import { Readable } from 'node:stream'
import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import type { EventView } from '../events/index.ts'
import { type TaskDeps, terminal } from './service.ts'
import { taskOf } from './store.ts'
import { orgOf, route } from '../../http/index.ts'

/** The reconnection delay a browser's EventSource is told (`retry:`), in ms. */
const RETRY_MS = 3000
/** A comment line this often, so that proxies and clients see a live connection. */
const HEARTBEAT_MS = 10_000
/** Another instance's events are seen at the next read: a reader reads at least this often. */
const POLL_MS = 1000
/** Events read per query (the events area's batch). */
const BATCH = 200
const MAX_SEQ = 2_147_483_647

/** One event in the server-sent events format (WHATWG HTML, "Server-sent events"): id, type, JSON data. */
export const sseEvent = (e: EventView) =>
  `id: ${e.stream_seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`

const ended = (e: EventView) =>
  e.type === 'task.state_changed' && terminal((e.data as { to: Parameters<typeof terminal>[0] }).to)

/**
 * The stream's text: `retry:` once, then the task's events after the `after`-th, and while the task
 * has not ended the events written later (woken at a local commit, polled for other instances'),
 * with a `: keep-alive` comment every 10 s. It ends after the event of a terminal state, at the
 * bound (RENTAL_EVENTS_STREAM_S: the client reconnects with Last-Event-ID), or when `signal` aborts.
 */
async function* eventStream(
  deps: TaskDeps,
  task: { id: string; ended: boolean },
  after: number,
  first: EventView[],
  signal: AbortSignal,
): AsyncGenerator<string> {
  yield `retry: ${RETRY_MS}\n\n`
  const deadline = Date.now() + deps.config.eventsStreamS * 1000
  let last = after
  let done = task.ended
  let beat = Date.now() + HEARTBEAT_MS
  let batch = first
  while (!signal.aborted) {
    for (const event of batch) {
      yield sseEvent(event)
      last = event.stream_seq ?? last
      if (ended(event)) done = true
    }
    if (batch.length < BATCH) {
      if (done || Date.now() >= deadline) return
      const wait = Math.min(POLL_MS, beat - Date.now(), deadline - Date.now())
      if (wait > 0) await deps.events.waitFor(task.id, wait, signal)
      if (signal.aborted) return
      if (Date.now() >= beat) {
        yield ': keep-alive\n\n'
        beat = Date.now() + HEARTBEAT_MS
      }
    }
    batch = await deps.events.stream(task.id, last, BATCH)
  }
}

/** `after` (query) or `Last-Event-ID` (header, what a browser sends on reconnecting): the latter wins. */
function cursorOf(after: number | undefined, lastEventId: string | undefined): number {
  if (lastEventId !== undefined) {
    const trimmed = lastEventId.trim()
    if (!/^\d{1,10}$/.test(trimmed) || Number(trimmed) > MAX_SEQ)
      throw rentalError(
        'invalid_request',
        'headers.last-event-id must be an event id of this stream (an integer)',
      )
    return Number(trimmed)
  }
  if (after !== undefined && !Number.isSafeInteger(after))
    throw rentalError('invalid_request', 'querystring.after must be a finite integer')
  return after ?? 0
}

/** `GET /api/tasks/{id}/events`: the task's events as server-sent events. */
export function taskEventRoutes(app: App, deps: TaskDeps) {
  const open = new Set<AbortController>()
  // a closing service ends its streams rather than waiting for their bound
  app.addHook('preClose', async () => {
    for (const controller of open) controller.abort()
  })
  app.get(
    '/api/tasks/:id/events',
    {
      ...route.session('tasks:read'),
      schema: {
        summary: 'The task’s events (state changes, trace lines) as server-sent events',
        description:
          'text/event-stream: `retry:` once, then per event `id:` (its number in the task’s stream), `event:` (its type) and `data:` (the event as JSON). ' +
          '`after=N` or the `Last-Event-ID` header (which wins: a browser’s EventSource sends it on reconnecting) continue after the N-th event. ' +
          'The stream stays open while the task runs, with a `: keep-alive` comment every 10 s, and ends after the event of a terminal state, or after RENTAL_EVENTS_STREAM_S (30 s): the client reconnects. ' +
          '204 when the task has ended and no event follows the N-th (an EventSource then stops reconnecting).',
        tags: ['tasks'],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        querystring: Type.Object({
          after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEQ })),
        }),
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 20 })) }),
        produces: ['text/event-stream'],
        response: {
          200: {
            description: 'the events, as server-sent events',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
          204: { description: 'the task has ended and no event follows', type: 'null' },
        },
      },
    },
    async (request, reply) => {
      const after = cursorOf(request.query.after, request.headers['last-event-id'])
      const task = await taskOf(deps.db, orgOf(request), request.params.id)
      if (!task) throw rentalError('task_not_found', `no task ${request.params.id}`)
      const first = await deps.events.stream(task.id, after, BATCH)
      const hasEnded = terminal(task.state)
      if (hasEnded && first.length === 0) return reply.code(204).send(null)
      const controller = new AbortController()
      open.add(controller)
      reply.raw.on('close', () => {
        controller.abort()
        open.delete(controller)
      })
      const body = Readable.from(
        eventStream(deps, { id: task.id, ended: hasEnded }, after, first, controller.signal),
        { objectMode: false },
      )
      body.on('close', () => open.delete(controller))
      return (
        reply
          .code(200)
          .type('text/event-stream; charset=utf-8')
          .header('cache-control', 'no-store')
          .header('x-accel-buffering', 'no')
          // the route's 200 is declared as text (the stream's content); the body is that text, streamed
          .send(body as unknown as string)
      )
    },
  )
}
