/**
 * A task's events as an async iterator over the rental's server-sent events
 * (`GET /api/tasks/{id}/events`). The server ends a stream after a terminal state or after its
 * bound (RENTAL_EVENTS_STREAM_S); the iterator reconnects with `Last-Event-ID` set to the last event
 * it gave, so no event is given twice or missed, and it ends after the terminal state (or a 204).
 */
import { type RentalApi, ok } from './api.ts'

export interface TaskEvent {
  /** The event's number in the task's stream (`id:`), what `Last-Event-ID` names. */
  stream_seq: number
  /** `task.created`, `task.state_changed`, `task.trace`, … */
  type: string
  actor: { type: string; id: string | null }
  data: Record<string, unknown>
  at?: string
}

export const TERMINAL_STATES = ['completed', 'failed', 'canceled', 'rejected']
const isEnd = (event: TaskEvent) =>
  event.type === 'task.state_changed' && TERMINAL_STATES.includes(String(event.data.to))

/** The `data:` of each complete event in `buffer`, and what is left after the last one. */
function takeEvents(buffer: string): { events: string[]; rest: string } {
  const events: string[] = []
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n')
  const rest = blocks.pop() ?? ''
  for (const block of blocks) {
    const data = block
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
    if (data.length) events.push(data.join('\n'))
  }
  return { events, rest }
}

export async function* taskEvents(
  api: RentalApi,
  taskId: string,
  options: { after?: number; signal?: AbortSignal } = {},
): AsyncGenerator<TaskEvent, void, undefined> {
  let last = options.after ?? 0
  for (;;) {
    const { response } = await api.GET('/api/tasks/{id}/events', {
      params: { path: { id: taskId }, header: { 'last-event-id': String(last) } },
      headers: { accept: 'text/event-stream' },
      parseAs: 'stream',
      ...(options.signal ? { signal: options.signal } : {}),
    })
    if (response.status === 204) return
    if (!response.ok || !response.body) {
      // the same typed error as every other call
      await ok(Promise.resolve({ error: await response.json().catch(() => ({})), response }))
    }
    let buffer = ''
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        const taken = takeEvents(buffer + value)
        buffer = taken.rest
        for (const data of taken.events) {
          const event = JSON.parse(data) as TaskEvent
          if (event.stream_seq <= last) continue
          last = event.stream_seq
          yield event
          if (isEnd(event)) return
        }
      }
    } finally {
      await reader.cancel().catch(() => {})
    }
  }
}
