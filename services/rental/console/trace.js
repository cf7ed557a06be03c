// @ts-check
// The task's timeline: each hop of its life (accepted, queued, the agent's work, the receipt) with
// how long it took, from the task's own events; and its OpenTelemetry trace, linked when the
// operator set RENTAL_TRACE_URL_TEMPLATE (the task answers `trace_url` then).
import { html } from './ui.js'

/** The hop an event ends: what the time since the previous event was spent on. */
function hopOf(event) {
  const d = event.data ?? {}
  if (event.type === 'task.created') return 'trace.hop.created'
  if (event.type === 'task.trace') return 'trace.hop.agent'
  if (event.type === 'task.state_changed' && d.to === 'working') return 'trace.hop.queued'
  if (event.type === 'task.state_changed' && d.to === 'completed') return 'trace.hop.completed'
  return 'trace.hop.ended'
}

/** Milliseconds as a person reads them: 12 ms, 1.4 s. */
const duration = (ms, lang) =>
  ms < 1000
    ? `${Math.round(ms).toLocaleString(lang)} ms`
    : `${(ms / 1000).toLocaleString(lang, { maximumFractionDigits: 1 })} s`

export function TraceTimeline({ task, events, t, lang }) {
  const at = (iso) => new Date(iso).getTime()
  const start = at(task.created_at)
  const rows = events.map((event, i) => ({
    id: event.id,
    hop: t(hopOf(event)),
    ms: Math.max(0, at(event.created_at) - (i === 0 ? start : at(events[i - 1].created_at))),
  }))
  const total = rows.reduce((sum, r) => sum + r.ms, 0) || 1
  return html`<section class="card" aria-labelledby="trace-title" data-testid="trace">
    <h2 id="trace-title">${t('trace.title')}</h2>
    ${
      task.trace_id
        ? html`<p>${t('trace.id')}: ${
            task.trace_url
              ? html`<a href=${task.trace_url} target="_blank" rel="noopener" dir="ltr" data-testid="trace-link">${task.trace_id}</a>`
              : html`<code dir="ltr">${task.trace_id}</code>`
          }</p>`
        : html`<p>${t('trace.none')}</p>`
    }
    ${
      rows.length
        ? html`<table class="timeline">
            <thead><tr><th scope="col">${t('trace.hop')}</th><th scope="col">${t('trace.duration')}</th></tr></thead>
            <tbody>
              ${rows.map(
                (r) => html`<tr key=${r.id}>
                  <td>${r.hop}</td>
                  <td><meter min="0" max=${total} value=${r.ms} aria-hidden="true"></meter> <span dir="ltr">${duration(r.ms, lang)}</span></td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : null
    }
  </section>`
}
