// @ts-check
// One place each: Schedules (Work: made here, paused and resumed here, their last task linked; paged) and
// Webhooks (Organization: made here, their deliveries and attempts). The old Organization screen
// "Triggers and webhooks" (#/automation) sends its deep link to Webhooks.
import { useEffect, useState } from 'preact/hooks'
import { api } from './api.js'
import { ScheduleForm, WebhookForm } from './forms.js'
import { firstWords } from './names.js'
import { Pager, usePaged } from './paging.js'
import { Loaded } from './tenant-ui.js'
import { say } from './toast.js'
import { ActionButton, allowed, html, useLoad, When } from './ui.js'

const code = (text) => (text ? html`<code dir="ltr">${text}</code>` : '—')

/** An empty list's next step: a link that takes the focus to the form on this page. */
const ToForm = ({ field, label }) =>
  html`<a href=${`#${field}`} onClick=${(e) => {
    e.preventDefault()
    document.getElementById(field)?.focus()
  }}>${label}</a>`

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

export function Webhooks({ me, t, lang }) {
  const webhooks = useLoad('/api/webhooks')
  const [open, setOpen] = useState(
    /** @type {import('./api-types').Answer<'GET', '/api/webhooks'>['webhooks'][number] | null} */ (null),
  )
  const mayWrite = allowed(me, 'webhooks:write')
  const made = async () => {
    await webhooks.reload()
    say(t('ctl.webhook_made'))
  }
  return html`<h1>${t('nav.webhooks')}</h1>
    ${mayWrite ? html`<${WebhookForm} t=${t} lang=${lang} reload=${made} />` : null}
    <${Loaded} load=${webhooks} rows=${webhooks.data?.webhooks} t=${t}
      empty=${mayWrite ? html`${t('ctl.no_webhooks')} <${ToForm} field="webhook-url" label=${t('webhook.new')} />` : t('ctl.no_webhooks')}>
      ${(rows) => html`<table class="list" data-testid="webhooks">
        <thead><tr><th>${t('col.url')}</th><th>${t('col.events')}</th><th>${t('col.created')}</th><th>${t('auto.deliveries')}</th></tr></thead>
        <tbody>${rows.map(
          (w) => html`<tr key=${w.id} data-webhook=${w.id}>
            <td>${code(w.url)}</td><td>${w.event_types.join(', ')}</td>
            <td><${When} iso=${w.created_at} lang=${lang} /></td>
            <td><button type="button" aria-expanded=${open?.id === w.id ? 'true' : 'false'} aria-controls="deliveries"
              onClick=${() => setOpen(open?.id === w.id ? null : w)}>${t('auto.show_deliveries')}</button></td>
          </tr>`,
        )}</tbody></table>
        ${
          open
            ? html`<section class="card" id="deliveries" aria-labelledby="deliveries-title">
                <h2 id="deliveries-title">${t('auto.deliveries')} <small>${code(open.url)}</small></h2>
                <${Deliveries} key=${open.id} id=${open.id} t=${t} lang=${lang} /></section>`
            : null
        }`}
    <//>`
}

export function Schedules({ me, t, lang }) {
  const schedules = usePaged('/api/schedules', { field: 'schedules' })
  const mayChange = allowed(me, 'schedules:write')
  const flip = (s) => async () => {
    const verb = s.state === 'paused' ? 'resume' : 'pause'
    const back = verb === 'pause' ? 'resume' : 'pause'
    const path = (v) => `/api/schedules/${encodeURIComponent(s.id)}/${v}`
    await api('POST', path(verb))
    await schedules.reload()
    const name = s.name ?? t('ctl.this_schedule')
    // pausing and resuming are each other's inverse
    say(t(`ctl.schedule_${verb}d`, { name }), async () => {
      await api('POST', path(back))
      await schedules.reload()
    })
  }
  const made = async () => {
    await schedules.reload()
    say(t('ctl.schedule_made'))
  }
  return html`<h1>${t('nav.schedules')}</h1>
    ${mayChange ? html`<${ScheduleForm} t=${t} lang=${lang} reload=${made} />` : null}
    <${Loaded} load=${schedules} rows=${schedules.data?.schedules} t=${t}
      empty=${mayChange ? html`${t('ctl.no_schedules')} <${ToForm} field="schedule-name" label=${t('ctl.make_schedule')} />` : t('ctl.no_schedules')}>
      ${(rows) => html`<table class="list" data-testid="schedules">
        <thead><tr><th>${t('col.name')}</th><th>${t('col.cron')}</th><th>${t('col.state')}</th>
          <th>${t('col.next')}</th><th>${t('col.task')}</th>${mayChange ? html`<th>${t('roles.actions')}</th>` : null}</tr></thead>
        <tbody>${rows.map(
          (s) => html`<tr key=${s.id} data-schedule=${s.id}>
            <td>${s.name ? html`<bdi dir="auto">${s.name}</bdi>` : code(s.id)}</td>
            <td>${code(s.cron)} <small>${s.timezone}</small></td>
            <td>${t(`schedule.${s.state}`)}</td>
            <td>${s.next_runs[0] ? html`<${When} iso=${s.next_runs[0]} lang=${lang} />` : '—'}</td>
            <td>${s.last_task_id ? html`<a href=${`#/tasks/${s.last_task_id}`}><bdi dir="auto">${firstWords(s.text) ?? t('task.untitled')}</bdi></a>${s.last_fired_at ? html`<br /><small class="hint"><${When} iso=${s.last_fired_at} lang=${lang} /></small>` : null}` : '—'}</td>
            ${
              mayChange && s.state !== 'ended'
                ? html`<td><${ActionButton} t=${t} busy=${t('loading')} action=${flip(s)}
                    label=${t(s.state === 'paused' ? 'auto.resume' : 'auto.pause')} /></td>`
                : mayChange
                  ? html`<td></td>`
                  : null
            }
          </tr>`,
        )}</tbody>
      </table>
      <${Pager} page=${schedules.page} t=${t} lang=${lang} />`}
    <//>`
}

/** #/automation, the old place of both: its deep link goes on to Webhooks (Organization). */
export function Automation() {
  useEffect(() => {
    location.replace('#/webhooks')
  }, [])
  return null
}
