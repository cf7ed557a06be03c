// Triggers and outbound webhooks: the organization's schedules (paused and resumed here) and its
// webhooks with their deliveries and attempts.
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { Loaded } from './tenant-ui.js'
import { ActionButton, allowed, html, useLoad, When } from './ui.js'

function Deliveries({ id, t, lang }) {
  const list = useLoad(`/api/webhooks/${encodeURIComponent(id)}/deliveries?limit=20`)
  return html`<${Loaded} load=${list} rows=${list.data?.deliveries} t=${t} empty=${t('auto.no_deliveries')}>
    ${(rows) => html`<table class="list" data-testid="deliveries">
      <thead><tr><th>${t('col.events')}</th><th>${t('col.state')}</th><th>${t('auto.attempts')}</th>
        <th>${t('col.created')}</th></tr></thead>
      <tbody>${rows.map(
        (d) => html`<tr key=${d.id}>
          <td><code dir="ltr">${d.event_type}</code></td>
          <td><span class=${`state delivery-${d.state}`}>${t(`delivery.${d.state}`)}</span></td>
          <td>${d.attempt_count}</td>
          <td><${When} iso=${d.created_at} lang=${lang} /></td>
        </tr>`,
      )}</tbody>
    </table>`}
  <//>`
}

function Webhook({ hook, t, lang }) {
  const [open, setOpen] = useState(false)
  return html`<li class="card">
    <p><code dir="ltr">${hook.url}</code></p>
    <p class="hint">${hook.event_types.join(', ')} · <${When} iso=${hook.created_at} lang=${lang} /></p>
    <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${t('auto.show_deliveries')}</button>
    ${open ? html`<${Deliveries} id=${hook.id} t=${t} lang=${lang} />` : null}
  </li>`
}

export function Automation({ me, t, lang }) {
  const schedules = useLoad('/api/schedules?limit=100')
  const webhooks = useLoad('/api/webhooks')
  const mayChange = allowed(me, 'schedules:write')
  const flip = (s) => async () => {
    await api(
      'POST',
      `/api/schedules/${encodeURIComponent(s.id)}/${s.state === 'paused' ? 'resume' : 'pause'}`,
    )
    await schedules.reload()
  }
  return html`<h1>${t('tenant.automation')}</h1>
    <section aria-labelledby="schedules-title">
      <h2 id="schedules-title">${t('auto.schedules')}</h2>
      <${Loaded} load=${schedules} rows=${schedules.data?.schedules} t=${t} empty=${t('schedules.empty')}>
        ${(rows) => html`<table class="list" data-testid="schedules">
          <thead><tr><th>${t('col.name')}</th><th>${t('col.cron')}</th><th>${t('col.state')}</th>
            <th>${t('col.next')}</th>${mayChange ? html`<th></th>` : null}</tr></thead>
          <tbody>${rows.map(
            (s) => html`<tr key=${s.id}>
              <td>${s.name ? html`<bdi dir="auto">${s.name}</bdi>` : html`<code dir="ltr">${s.id}</code>`}</td>
              <td><code dir="ltr">${s.cron}</code> <small>${s.timezone}</small></td>
              <td>${t(`schedule.${s.state}`)}</td>
              <td>${s.next_runs[0] ? html`<${When} iso=${s.next_runs[0]} lang=${lang} />` : '—'}</td>
              ${
                mayChange
                  ? html`<td><${ActionButton} t=${t} busy=${t('loading')} action=${flip(s)}
                      label=${t(s.state === 'paused' ? 'auto.resume' : 'auto.pause')} /></td>`
                  : null
              }
            </tr>`,
          )}</tbody>
        </table>`}
      <//>
    </section>
    <section aria-labelledby="webhooks-title">
      <h2 id="webhooks-title">${t('auto.webhooks')}</h2>
      <${Loaded} load=${webhooks} rows=${webhooks.data?.webhooks} t=${t} empty=${t('webhooks.empty')}>
        ${(rows) => html`<ul class="cards">${rows.map((w) => html`<${Webhook} key=${w.id} hook=${w} t=${t} lang=${lang} />`)}</ul>`}
      <//>
    </section>`
}
