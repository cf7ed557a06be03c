// @ts-check
// The create forms above the lists: a budget, an outbound webhook (its signing secret shown once)
// and a schedule (its next runs, as the API answers them, in words). Each shows the API's refusal
// in words and reloads its list after.
import { useState } from 'preact/hooks'
import { api, ApiError } from './api.js'
import { FieldsInvalid, isAmount, useFieldProblems } from './field-check.js'
import { filsOf } from './disputes.js'
import { formatDate } from './i18n.js'
import { engagementLabel } from './names.js'
import { ErrorText, html, useLoad } from './ui.js'

/** A form that posts what `send` makes of its fields; a refusal in words, `onDone(answer)` after. */
function CreateForm({ id, title, t, send, onDone, children, submit }) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const [stepUp, setStepUp] = useState(false)
  const run = async (e) => {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setStepUp(false)
    try {
      await onDone(await send())
    } catch (err) {
      if (err instanceof ApiError && err.code === 'step_up_required') setStepUp(true)
      else if (!(err instanceof FieldsInvalid)) setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="form card" data-testid=${id} aria-labelledby=${`${id}-title`} novalidate onSubmit=${run}>
    <h2 id=${`${id}-title`}>${title}</h2>
    ${children}
    <button type="submit" class="primary" disabled=${busy}>${busy ? t('form.saving') : submit}</button>
    <${ErrorText} error=${error} t=${t} />
    ${
      stepUp
        ? html`<p role="alert">${t('form.step_up')} <a href=${`/api/auth/step-up?return_to=${encodeURIComponent(`/console${location.hash}`)}`}>${t('danger.step_up_link')}</a></p>`
        : null
    }
  </form>`
}

/** A labelled field; with `fields` (useFieldProblems), its problem said under it. */
const Input = ({ id, label, value, set, hint, fields, ...rest }) =>
  html`<label for=${id}>${label}</label>
    <input id=${id} value=${value} onInput=${(e) => set(e.currentTarget.value)} ...${rest} ...${fields?.at(id) ?? {}} />
    ${fields?.note(id)}
    ${hint ? html`<small class="hint">${hint}</small>` : null}`

/** Words split on commas and spaces. */
const wordsOf = (text) => text.split(/[\s,]+/).filter(Boolean)

function useFields(initial) {
  const [fields, setFields] = useState(initial)
  const bind = (name) => ({ value: fields[name], set: (v) => setFields((f) => ({ ...f, [name]: v })) })
  return { fields, bind, reset: () => setFields(initial) }
}

export function BudgetForm({ t, lang, reload }) {
  const {
    fields: f,
    bind,
    reset,
  } = useFields({ name: '', limit: '', scope: 'organization', target: '', thresholds: '80' })
  const fields = useFieldProblems()
  const send = () => {
    const limit = filsOf(f.limit)
    const thresholds = wordsOf(f.thresholds).map(Number)
    fields.check({
      'budget-limit': isAmount(f.limit) && limit ? null : t('amount.invalid'),
      'budget-target': f.scope !== 'organization' && !f.target.trim() ? t('field.required') : null,
      'budget-thresholds': thresholds.some((n) => !Number.isInteger(n) || n < 1 || n > 100)
        ? t('budget.bad_thresholds')
        : null,
    })
    return api('POST', `/api/budgets?lang=${lang}`, {
      limit_fils: limit,
      thresholds,
      ...(f.name.trim() ? { name: f.name.trim() } : {}),
      ...(f.scope === 'engagement' ? { engagement_id: f.target.trim() } : {}),
      ...(f.scope === 'agent' ? { agent_did: f.target.trim() } : {}),
    })
  }
  return html`<${CreateForm} id="budget-form" title=${t('budget.new')} submit=${t('budget.create')} t=${t} send=${send}
    onDone=${async () => {
      reset()
      await reload()
    }}>
    <${Input} id="budget-name" label=${t('col.name')} maxlength="200" ...${bind('name')} />
    <${Input} id="budget-limit" label=${t('budget.limit')} inputmode="decimal" required fields=${fields} ...${bind('limit')} hint=${t('budget.limit_hint')} />
    <label for="budget-scope">${t('budget.scope')}</label>
    <select id="budget-scope" value=${f.scope} onChange=${(e) => bind('scope').set(e.currentTarget.value)}>
      ${['organization', 'engagement', 'agent'].map((s) => html`<option value=${s}>${t(`budgets.scope.${s}`)}</option>`)}
    </select>
    ${
      f.scope === 'organization'
        ? null
        : html`<${Input} id="budget-target" dir="ltr" required fields=${fields} label=${t(f.scope === 'agent' ? 'budget.agent' : 'budget.engagement')} ...${bind('target')} />`
    }
    <${Input} id="budget-thresholds" fields=${fields} label=${t('budget.thresholds')} hint=${t('budget.thresholds_hint')} ...${bind('thresholds')} />
  <//>`
}

export function WebhookForm({ t, reload }) {
  const { bind, fields: f, reset } = useFields({ url: '', events: '*', description: '' })
  const [created, setCreated] = useState(
    /** @type {import('./api-types').Answer<'POST', '/api/webhooks'> | null} */ (null),
  )
  const [copied, setCopied] = useState(false)
  const fields = useFieldProblems()
  const send = () => {
    fields.check({
      // a web address; the rental itself refuses one that is not https where it must be (production)
      'webhook-url': /^https?:\/\/\S+$/.test(f.url.trim()) ? null : t('field.https_url'),
      'webhook-events': wordsOf(f.events).length ? null : t('field.required'),
    })
    return api('POST', '/api/webhooks', {
      url: f.url.trim(),
      event_types: wordsOf(f.events),
      ...(f.description.trim() ? { description: f.description.trim() } : {}),
    })
  }
  // without the clipboard (denied, or not a secure context) the secret is selected to copy by hand
  const copy = async (e) => {
    const shown = e.currentTarget.previousElementSibling
    try {
      await globalThis.navigator.clipboard.writeText(created?.secret ?? '')
      setCopied(true)
    } catch {
      globalThis.getSelection()?.selectAllChildren(shown)
    }
  }
  return html`<${CreateForm} id="webhook-form" title=${t('webhook.new')} submit=${t('webhook.create')} t=${t} send=${send}
    onDone=${async (answer) => {
      setCreated(answer)
      setCopied(false)
      reset()
      await reload()
    }}>
    <${Input} id="webhook-url" type="url" dir="ltr" required fields=${fields} label=${t('col.url')} placeholder="https://" ...${bind('url')} />
    <${Input} id="webhook-events" dir="ltr" required fields=${fields} label=${t('col.events')} hint=${t('webhook.events_hint')} ...${bind('events')} />
    <${Input} id="webhook-description" label=${t('webhook.description')} maxlength="500" ...${bind('description')} />
    ${
      created
        ? html`<div class="card warning" role="status" data-testid="webhook-secret">
            <p>${t('webhook.secret_once')}</p>
            <p><code dir="ltr">${created.secret}</code>
              <button type="button" onClick=${copy}>${copied ? t('webhook.copied') : t('webhook.copy')}</button></p>
          </div>`
        : null
    }
  <//>`
}

export function ScheduleForm({ t, lang, reload }) {
  const engagements = useLoad('/api/engagements?limit=50')
  const active = (engagements.data?.engagements ?? []).filter((e) => e.state === 'active')
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
  const {
    bind,
    fields: f,
    reset,
  } = useFields({ engagement: '', name: '', text: '', cron: '0 9 * * 1', timezone: zone })
  const [created, setCreated] = useState(
    /** @type {import('./api-types').Answer<'POST', '/api/schedules'> | null} */ (null),
  )
  const engagement = f.engagement || active[0]?.id || ''
  const fields = useFieldProblems()
  const send = () => {
    fields.check({
      'schedule-text': f.text.trim() ? null : t('field.task_text'),
      'schedule-cron': wordsOf(f.cron).length === 5 ? null : t('error.code.invalid_cron'),
    })
    return api('POST', '/api/schedules', {
      engagement_id: engagement,
      text: f.text,
      cron: f.cron.trim(),
      timezone: f.timezone.trim() || 'UTC',
      ...(f.name.trim() ? { name: f.name.trim() } : {}),
    })
  }
  if (engagements.data && active.length === 0)
    return html`<p class="hint card">${t('schedule.no_engagement')} <a href="#/market">${t('nav.market')}</a></p>`
  return html`<${CreateForm} id="schedule-form" title=${t('schedule.new')} submit=${t('schedule.create')} t=${t} send=${send}
    onDone=${async (answer) => {
      setCreated(answer)
      reset()
      await reload()
    }}>
    <label for="schedule-engagement">${t('schedule.engagement')}</label>
    <select id="schedule-engagement" value=${engagement} onChange=${(e) => bind('engagement').set(e.currentTarget.value)}>
      ${active.map((e) => html`<option value=${e.id}>${engagementLabel(e, lang)}</option>`)}
    </select>
    <${Input} id="schedule-name" label=${t('col.name')} maxlength="200" ...${bind('name')} />
    <label for="schedule-text">${t('task.text')}</label>
    <textarea dir="auto" id="schedule-text" rows="3" required maxlength="20000" value=${f.text} ...${fields.at('schedule-text')}
      onInput=${(e) => bind('text').set(e.currentTarget.value)}></textarea>
    ${fields.note('schedule-text')}
    <${Input} id="schedule-cron" dir="ltr" required fields=${fields} label=${t('col.cron')} hint=${t('schedule.cron_hint')} ...${bind('cron')} />
    <${Input} id="schedule-timezone" dir="ltr" label=${t('schedule.timezone')} ...${bind('timezone')} />
    ${
      created
        ? html`<div role="status" data-testid="schedule-next"><p>${t('schedule.created_next', { cron: created.cron, zone: created.timezone })}</p>
            <ul>${created.next_runs.map(
              (iso) =>
                html`<li key=${iso}><time datetime=${iso}>${formatDate(iso, lang, { dateStyle: 'full', timeZone: created.timezone })}</time></li>`,
            )}</ul></div>`
        : null
    }
  <//>`
}
