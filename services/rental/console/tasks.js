// Tasks: the list, and one task with its progress live from the events stream
// (GET /api/tasks/{id}/events through EventSource), its output, and cancel and retry.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { TaskMoney } from './disputes.js'
import { TaskRows } from './home.js'
import { Receipts } from './receipts.js'
import { TraceTimeline } from './trace.js'
import { ActionButton, Did, Empty, ErrorText, html, Loading, StateBadge, useLoad, When } from './ui.js'

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'rejected'])
const TYPES = ['task.created', 'task.state_changed', 'task.trace']

export function Tasks({ t, lang }) {
  const list = useLoad('/api/tasks?limit=50')
  return html`<h1>${t('tasks.title')}</h1>
    <${ErrorText} error=${list.error} t=${t} />
    ${
      !list.data
        ? html`<${Loading} t=${t} />`
        : list.data.tasks.length === 0
          ? html`<${Empty}>${t('tasks.empty')} <a href="#/engagements">${t('nav.engagements')}</a><//>`
          : html`<${TaskRows} tasks=${list.data.tasks} t=${t} lang=${lang} />`
    }`
}

/**
 * The task's events as they happen. The stream ends after a terminal state; the browser then
 * reconnects with Last-Event-ID and is answered 204, which closes it for good. A retried task
 * starts a new stream of events after the last one seen.
 */
function useEvents(id, generation, onChange) {
  const [events, setEvents] = useState([])
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
      ? t('event.task.state_changed', { from: t(`state.${d.from}`), to: t(`state.${d.to}`) })
      : t(`event.${event.type}`)
  const detail = event.type === 'task.trace' ? (d.error ?? d.message ?? d.agent_state ?? '') : ''
  return html`<li data-type=${event.type}>
    <${When} iso=${event.created_at} lang=${lang} /> — ${what}${detail ? html` <small dir="ltr">${String(detail)}</small>` : null}
  </li>`
}

export function Task({ id, t, lang }) {
  const loaded = useLoad(`/api/tasks/${encodeURIComponent(id)}`)
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
  return html`<p><a href=${`#/engagements/${task.engagement_id}`}><span class="back-arrow" aria-hidden="true">←</span> ${t('nav.engagements')}</a></p>
    <h1>${t('task.title')} <code dir="ltr">${task.id}</code></h1>
    <section class="card">
      <dl>
        <dt>${t('task.state')}</dt><dd data-testid="task-state" data-state=${task.state}><${StateBadge} state=${task.state} t=${t} /></dd>
        <dt>${t('eng.agent')}</dt><dd><${Did} did=${task.agent_did} /></dd>
        <dt>${t('task.created')}</dt><dd><${When} iso=${task.created_at} lang=${lang} /></dd>
        ${task.receipt ? html`<dt>${t('task.receipt')}</dt><dd><code dir="ltr" class="hash">${task.receipt.leaf_hash}</code></dd>` : null}
        ${task.error ? html`<dt>${t('task.error')}</dt><dd class="error">${task.error}</dd>` : null}
      </dl>
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
