// @ts-check
// Tasks: the list, and one task with its progress live from the events stream
// (GET /api/tasks/{id}/events through EventSource), its output, and cancel and retry.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { TaskMoney } from './disputes.js'
import { TaskRows } from './home.js'
import { Pager, usePaged } from './paging.js'
import { Receipts } from './receipts.js'
import { TraceTimeline } from './trace.js'
import { agentStateWords, CopyId, duration, paymentWords, stateKey, TaskState } from './names.js'
import { ActionButton, Empty, ErrorText, html, Loading, useLoad, When } from './ui.js'

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected'])
const TYPES = ['task.created', 'task.state_changed', 'task.trace']

export function Tasks({ t, lang }) {
  const list = usePaged(`/api/tasks?lang=${lang}`, { field: 'tasks' })
  return html`<h1>${t('tasks.title')}</h1>
    <${ErrorText} error=${list.error} t=${t} />
    ${
      !list.data
        ? html`<${Loading} t=${t} />`
        : list.data.tasks.length === 0
          ? html`<${Empty}>${t('tasks.empty')} <a href="#/engagements">${t('nav.engagements')}</a><//>`
          : html`<${TaskRows} tasks=${list.data.tasks} t=${t} lang=${lang} />
            <${Pager} page=${list.page} t=${t} lang=${lang} />`
    }`
}

/**
 * The task's events as they happen. The stream ends after a terminal state; the browser then
 * reconnects with Last-Event-ID and is answered 204, which closes it for good. A retried task
 * starts a new stream of events after the last one seen.
 */
function useEvents(id, generation, onChange) {
  const [events, setEvents] = useState(/** @type {any[]} */ ([]))
  const [live, setLive] = useState(false)
  useEffect(() => {
    const source = new EventSource(`/api/tasks/${encodeURIComponent(id)}/events`)
    const seen = new Set()
    const onEvent = (message) => {
      if (seen.has(message.lastEventId)) return
      seen.add(message.lastEventId)
      const event = JSON.parse(message.data)
      setEvents((list) => [...list, event])
      if (event.type === 'task.state_changed') onChange()
    }
    for (const type of TYPES) source.addEventListener(type, onEvent)
    source.onopen = () => setLive(true)
    source.onerror = () => setLive(source.readyState === EventSource.OPEN)
    setEvents([])
    return () => source.close()
  }, [id, generation])
  return { events, live }
}

function EventLine({ event, t, lang }) {
  const d = event.data ?? {}
  const what =
    event.type === 'task.state_changed'
      ? t('event.task.state_changed', { from: t(stateKey(d.from)), to: t(stateKey(d.to)) })
      : t(`event.${event.type}`)
  // an agent's own A2A state (TASK_STATE_COMPLETED) in words; its messages and errors as it wrote them
  const detail =
    event.type === 'task.trace'
      ? (d.error ?? d.message ?? (d.agent_state ? agentStateWords(d.agent_state, t) : ''))
      : ''
  return html`<li data-type=${event.type}>
    <${When} iso=${event.created_at} lang=${lang} /> — ${what}${detail ? html`: <small dir="auto">${String(detail)}</small>` : null}
  </li>`
}

export function Task({ id, t, lang }) {
  const loaded = useLoad(`/api/tasks/${encodeURIComponent(id)}?lang=${lang}`)
  const [generation, setGeneration] = useState(0)
  const { events, live } = useEvents(id, generation, () => void loaded.reload())
  const task = loaded.data
  if (loaded.error && !task)
    return html`<h1>${t('task.title')}</h1><${ErrorText} error=${loaded.error} t=${t} />
      <p><a href="#/tasks">${t('nav.tasks')}</a></p>`
  if (!task) return html`<${Loading} t=${t} />`
  const act = (what) => async () => {
    await api('POST', `/api/tasks/${encodeURIComponent(id)}/${what}`)
    await loaded.reload()
    if (what === 'retry') setGeneration((g) => g + 1)
  }
  const name = task.job_title ?? task.agent_name ?? t('task.untitled')
  return html`${
    task.engagement_id
      ? html`<p><a href=${`#/engagements/${task.engagement_id}`}><span class="back-arrow" aria-hidden="true">←</span> ${t('nav.engagements')}</a></p>`
      : null
  }
    <h1 data-testid="task-title">${name}</h1>
    <section class="card">
      <dl>
        <dt>${t('task.state')}</dt><dd data-testid="task-state" data-state=${task.state}><${TaskState} state=${task.state} t=${t} /></dd>
        <dt>${t('eng.agent')}</dt><dd data-testid="task-agent">${task.agent_name ?? t('sign.the_agent')}</dd>
        <dt>${t('task.price')}</dt><dd><bdi class="money" data-testid="task-price">${task.price.display}</bdi></dd>
        <dt>${t('task.payment')}</dt><dd data-testid="task-payment" data-escrow=${task.escrow_state ?? ''}>${paymentWords(task.escrow_state, task.price_fils, t)}</dd>
        <dt>${t('task.created')}</dt><dd><${When} iso=${task.created_at} lang=${lang} /></dd>
        ${task.duration_ms !== null ? html`<dt>${t('task.duration')}</dt><dd data-testid="task-duration">${duration(task.duration_ms, lang)}</dd>` : null}
        ${task.error ? html`<dt>${t('task.error')}</dt><dd class="error" dir="auto">${task.error}</dd>` : null}
      </dl>
      <p class="ids">
        <${CopyId} label=${t('task.id')} value=${task.id} t=${t} />
        <${CopyId} label=${t('task.agent_did')} value=${task.agent_did} t=${t} />
        ${task.receipt?.leaf_hash ? html`<${CopyId} label=${t('receipt.leaf')} value=${task.receipt.leaf_hash} t=${t} />` : null}
      </p>
      <div class="actions">
        ${
          !TERMINAL.has(task.state)
            ? html`<${ActionButton} label=${t('task.cancel')} busy=${t('loading')} t=${t} action=${act('cancel')} />`
            : null
        }
        ${
          task.state === 'failed'
            ? html`<${ActionButton} kind="primary" label=${t('task.retry')} busy=${t('loading')} t=${t} action=${act('retry')} />`
            : null
        }
      </div>
    </section>
    <section class="card" aria-labelledby="input-title">
      <h2 id="input-title">${t('task.input')}</h2>
      ${
        task.input_text !== null
          ? html`<pre class="output" dir="auto" data-testid="input">${task.input_text}</pre>`
          : html`<${Empty}>${t('task.input_gone')}<//>`
      }
    </section>
    <section class="card" aria-labelledby="events-title">
      <h2 id="events-title">${t('task.events')} ${live ? html`<span class="live">● ${t('task.live')}</span>` : null}</h2>
      <ol class="events" aria-live="polite" data-testid="events">
        ${events.length === 0 ? html`<li>${t('task.no_events')}</li>` : events.map((e) => html`<${EventLine} key=${e.id} event=${e} t=${t} lang=${lang} />`)}
      </ol>
    </section>
    <${TraceTimeline} task=${task} events=${events} t=${t} lang=${lang} />
    <section class="card" aria-labelledby="output-title">
      <h2 id="output-title">${t('task.output')}</h2>
      ${
        task.output
          ? html`<pre class="output" dir="auto" data-testid="output">${task.output.text ?? JSON.stringify(task.output.data, null, 2)}</pre>`
          : html`<${Empty}>${task.output_expired ? t('task.output_expired') : t('task.no_output')}<//>`
      }
    </section>
    <${Receipts} did=${task.agent_did} taskIds=${[task.id]} escrowIds=${task.escrow_id ? [task.escrow_id] : []}
      t=${t} lang=${lang} reloadKey=${task.state} />
    <${TaskMoney} task=${task} t=${t} lang=${lang} />`
}
