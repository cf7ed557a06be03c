import { html } from '@svc/kit'
import { type Lang, t } from '../../pages/i18n.ts'
import { at, phraseHtml } from '../../pages/layout.ts'
import type { liveTasksOf } from './store.ts'

type LiveTask = Awaited<ReturnType<typeof liveTasksOf>>[number]

/** A ceiling as people read it: `amount 500, currency EUR`. */
export const ceilingText = (ceiling: Record<string, unknown> | null) =>
  ceiling
    ? Object.entries(ceiling)
        .map(([k, v]) => `${k} ${String(v)}`)
        .join(', ')
    : ''

const usesLeft = (lang: Lang, task: LiveTask) =>
  phraseHtml(lang, '{left} of {max} uses left, until {until}', {
    left: task.max_uses - task.uses,
    max: task.max_uses,
    until: at(lang, task.expires_at),
  })

/** The account page's list of task grants that can still issue tokens, each with a way to end it. */
export const taskSection = (lang: Lang, csrf: string, tasks: LiveTask[]) =>
  html`<h3>${t(lang, 'Tasks you allowed')}</h3>
    ${tasks.length === 0 ? html`<p>${t(lang, 'No app holds a task grant.')}</p>` : ''}
    ${tasks.map(
      (task) =>
        html`<form method="post" action="/ui/account/tasks/end">
          <input type="hidden" name="csrf" value="${csrf}" />
          <input type="hidden" name="task_id" value="${task.id}" />
          <p>
            <strong>${task.client_name}</strong>: ${task.purpose}. ${usesLeft(lang, task)}${
              task.ceiling ? html`; ${t(lang, 'limits')}: ${ceilingText(task.ceiling)}` : ''
            }
            <button type="submit">${t(lang, 'End this task')}</button>
          </p>
        </form>`,
    )}`
