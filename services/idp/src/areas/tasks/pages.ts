import { html } from '@svc/kit'
import type { liveTasksOf } from './store.ts'

type LiveTask = Awaited<ReturnType<typeof liveTasksOf>>[number]

/** A ceiling as people read it: `amount 500, currency EUR`. */
export const ceilingText = (ceiling: Record<string, unknown> | null) =>
  ceiling
    ? Object.entries(ceiling)
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(', ')
    : ''

/** The account page's list of task grants that can still issue tokens, each with a way to end it. */
export const taskSection = (csrf: string, tasks: LiveTask[]) =>
  html`<h2>Tasks you allowed</h2>
    ${tasks.length === 0 ? html`<p>No app holds a task grant.</p>` : ''}
    ${tasks.map(
      (t) =>
        html`<form method="post" action="/ui/account/tasks/end">
          <input type="hidden" name="csrf" value="${csrf}" />
          <input type="hidden" name="task_id" value="${t.id}" />
          <p>
            <strong>${t.client_name}</strong>: ${t.purpose}. ${t.max_uses - t.uses} of ${t.max_uses} uses
            left, until ${t.expires_at.toISOString()}${t.ceiling ? html`; limits: ${ceilingText(t.ceiling)}` : ''}
            <button type="submit">End this task</button>
          </p>
        </form>`,
    )}`
