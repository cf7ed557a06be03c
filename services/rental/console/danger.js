// The danger zone: every record of the organization exported to one archive (gathered by the
// browser from the API, with its progress shown), and the organization's permanent deletion
// (erasure: after a step-up and the organization's id typed again).
import { useState } from 'preact/hooks'
import { api, ApiError } from './api.js'
import { allowed, ErrorText, html } from './ui.js'

/** What the archive holds: a name, the GET, and how it pages (offset, cursor, before, or one call). */
const SECTIONS = [
  ['organization', '/v1/org', 'one'],
  ['profile', '/v1/users/me', 'one'],
  ['members', '/v1/users', 'offset'],
  ['roles', '/v1/roles', 'one'],
  ['organization_keys', '/v1/auth/keys', 'one'],
  ['secrets', '/v1/secrets', 'one'],
  ['engagements', '/api/engagements', 'offset'],
  ['tasks', '/api/tasks', 'offset'],
  ['executions', '/v1/executions', 'cursor'],
  ['approvals', '/api/approvals', 'offset'],
  ['audit', '/v1/audit', 'before'],
  ['statement', '/api/statements', 'one'],
  ['invoices', '/api/invoices', 'offset'],
  ['refunds', '/api/refunds', 'offset'],
  ['budgets', '/api/budgets', 'offset'],
  ['disputes', '/api/disputes', 'offset'],
  ['incidents', '/api/incidents', 'offset'],
  ['schedules', '/api/schedules', 'offset'],
  ['webhooks', '/api/webhooks', 'offset'],
  ['connections', '/v1/connect/connections/health', 'one'],
  ['retention', '/api/retention', 'one'],
]
const LIMIT = 100
/** At most this many pages of one section (100 000 rows): the archive stays in the browser's memory. */
const MAX_PAGES = 1000

const join = (path, query) => `${path}${path.includes('?') ? '&' : '?'}${query}`
const rowsOf = (answer) => Object.values(answer ?? {}).find(Array.isArray) ?? []

/** One section, every page of it. */
async function gather(path, paging) {
  if (paging === 'one') return api('GET', path)
  const rows = []
  let query = `limit=${LIMIT}`
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await api('GET', join(path, query))
    const got = rowsOf(answer)
    rows.push(...got)
    if (paging === 'cursor' && answer.next_cursor)
      query = `limit=${LIMIT}&cursor=${encodeURIComponent(answer.next_cursor)}`
    else if (paging === 'before' && answer.next_before) query = `limit=${LIMIT}&before=${answer.next_before}`
    else if (paging === 'offset' && got.length === LIMIT)
      query = `limit=${LIMIT}&offset=${(page + 1) * LIMIT}`
    else break
  }
  return rows
}

function Export({ me, t }) {
  const [progress, setProgress] = useState(null)
  const [archive, setArchive] = useState(null)
  const [error, setError] = useState(null)
  const run = async () => {
    setError(null)
    setArchive(null)
    const sections = {}
    const skipped = []
    try {
      for (const [i, [name, path, paging]] of SECTIONS.entries()) {
        setProgress({ n: i + 1, section: name })
        try {
          sections[name] = await gather(path, paging)
        } catch (e) {
          // a section the role may not read is named as left out, not a failure
          if (e instanceof ApiError && e.status === 403) skipped.push(name)
          else throw e
        }
      }
      const body = JSON.stringify(
        {
          format: 'rental-tenant-export/v1',
          organization_id: me.organization.id,
          exported_at: new Date().toISOString(),
          exported_by: me.client.email ?? me.client.subject,
          left_out: skipped,
          sections,
        },
        null,
        2,
      )
      const file = `${me.organization.id}-export-${new Date().toISOString().slice(0, 10)}.json`
      const url = globalThis.URL.createObjectURL(new globalThis.Blob([body], { type: 'application/json' }))
      setArchive({ url, file, count: Object.keys(sections).length, skipped })
    } catch (e) {
      setError(e)
    } finally {
      setProgress(null)
    }
  }
  return html`<section class="card" aria-labelledby="export-title" data-testid="export">
    <h2 id="export-title">${t('danger.export')}</h2>
    <p>${t('danger.export_hint')}</p>
    <button type="button" disabled=${progress !== null} onClick=${run}>${t('danger.export_button')}</button>
    ${
      progress
        ? html`<p aria-live="polite"><label for="export-progress">${t('danger.exporting', {
            section: progress.section,
            n: progress.n,
            total: SECTIONS.length,
          })}</label>
          <progress id="export-progress" max=${SECTIONS.length} value=${progress.n}></progress></p>`
        : null
    }
    <${ErrorText} error=${error} t=${t} />
    ${
      archive
        ? html`<p class="ok" role="status">${t('danger.exported', { file: archive.file, sections: archive.count })}${' '}
            <a href=${archive.url} download=${archive.file} data-testid="export-download">${t('danger.download')}</a></p>
          ${archive.skipped.length ? html`<p class="hint">${t('danger.skipped', { sections: archive.skipped.join(', ') })}</p>` : null}`
        : null
    }
  </section>`
}

function Delete({ me, t }) {
  const id = me.organization.id
  const [typed, setTyped] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(null)
  const [stepUp, setStepUp] = useState(false)
  const [done, setDone] = useState(false)
  if (!allowed(me, 'clients:erase'))
    return html`<section class="card danger"><h2>${t('danger.delete')}</h2><p class="hint">${t('danger.no_permission')}</p></section>`
  const matches = typed.trim() === id
  const submit = async (e) => {
    e.preventDefault()
    if (!matches) return setError(new Error(t('danger.mismatch')))
    setBusy(true)
    setError(null)
    setStepUp(false)
    try {
      await api('POST', '/api/clients/erase', { confirm: typed.trim() })
      setDone(true)
    } catch (err) {
      // a 401 of its own: the session stands, a second factor is asked (said below, with the way)
      if (err instanceof ApiError && err.code === 'step_up_required') setStepUp(true)
      else setError(err)
    } finally {
      setBusy(false)
    }
  }
  if (done)
    return html`<section class="card danger"><p class="ok" role="status">${t('danger.deleted')}</p></section>`
  return html`<form class="card danger" data-testid="delete-org" onSubmit=${submit}>
    <h2>${t('danger.delete')}</h2>
    <p>${t('danger.delete_hint')}</p>
    <p class="field"><label for="confirm-org">${t('danger.confirm_label', { id })}</label>
      <input id="confirm-org" dir="ltr" autocomplete="off" spellcheck="false" value=${typed}
        onInput=${(ev) => setTyped(ev.currentTarget.value)} /></p>
    <button type="submit" class="danger" disabled=${busy || !matches}>${busy ? t('danger.deleting') : t('danger.delete_button')}</button>
    <${ErrorText} error=${error} t=${t} />
    ${
      stepUp
        ? html`<p role="alert" data-testid="step-up">${t('danger.step_up')} <a href=${`/api/auth/step-up?return_to=${encodeURIComponent('/console#/danger')}`}>${t('danger.step_up_link')}</a></p>`
        : null
    }
  </form>`
}

export function Danger({ me, t }) {
  return html`<h1>${t('danger.title')}</h1>
    <${Export} me=${me} t=${t} />
    <${Delete} me=${me} t=${t} />`
}
