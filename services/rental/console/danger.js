// @ts-check
// The danger zone: every record of the organization exported to one archive (gathered by the
// server's export job, its progress polled and shown; the zip kept sealed seven days), and the
// organization's permanent deletion (erasure: after a step-up and the organization's id typed again).
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, ApiError } from './api.js'
import { allowed, ErrorText, html, When } from './ui.js'

/** How often a running export is asked for its progress. */
const POLL_MS = 1000
const kib = (bytes) => `${Math.max(1, Math.round(bytes / 1024))} KiB`

function Export({ me, t, lang }) {
  const [job, setJob] = useState(
    /** @type {import('./api-types').Answer<'GET', '/v1/tenant/exports/{id}'> | null} */ (null),
  )
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const timer = useRef(/** @type {ReturnType<typeof setTimeout> | undefined} */ (undefined))
  const may = allowed(me, 'exports:write')
  const follow = (id) => {
    globalThis.clearTimeout(timer.current)
    const poll = async () => {
      try {
        const now = await api('GET', `/v1/tenant/exports/${id}`)
        setJob(now)
        if (now.state === 'queued' || now.state === 'running')
          timer.current = globalThis.setTimeout(poll, POLL_MS)
      } catch (e) {
        setError(e)
      }
    }
    return poll()
  }
  // the latest export: one still running is followed again, a ready one offered
  useEffect(() => {
    if (!may) return undefined
    api('GET', '/v1/tenant/exports')
      .then(({ exports }) => {
        const latest = exports[0]
        if (!latest) return
        setJob(latest)
        if (latest.state === 'queued' || latest.state === 'running') follow(latest.id)
      })
      .catch(setError)
    return () => globalThis.clearTimeout(timer.current)
  }, [may])
  if (!may)
    return html`<section class="card" data-testid="export"><h2>${t('danger.export')}</h2>
      <p class="hint">${t('danger.export_no_permission')}</p></section>`
  const busy = job !== null && (job.state === 'queued' || job.state === 'running')
  const run = async () => {
    setError(null)
    try {
      const started = await api('POST', '/v1/tenant/exports')
      setJob(started)
      await follow(started.id)
    } catch (e) {
      // one already runs (another tab, another admin): follow it
      const running = e instanceof ApiError && e.code === 'export_in_progress' && /exp_[\w-]+/.exec(e.message)
      if (running) await follow(running[0])
      else setError(e)
    }
  }
  const p = job?.progress ?? { done: 0, total: 0, section: null, percent: 0 }
  return html`<section class="card" aria-labelledby="export-title" data-testid="export">
    <h2 id="export-title">${t('danger.export')}</h2>
    <p>${t('danger.export_hint')}</p>
    <button type="button" disabled=${busy} onClick=${run}>${t('danger.export_button')}</button>
    ${
      busy
        ? html`<p aria-live="polite"><label for="export-progress">${
            p.section
              ? t('danger.exporting', { section: p.section, n: p.done + 1, total: p.total })
              : t('danger.export_queued')
          }</label>
          <progress id="export-progress" max=${p.total} value=${p.done}></progress></p>`
        : null
    }
    <${ErrorText} error=${error} t=${t} />
    ${job?.state === 'failed' ? html`<p class="error" role="alert">${t('danger.export_failed')}</p>` : null}
    ${job?.state === 'expired' ? html`<p class="hint">${t('danger.export_expired')}</p>` : null}
    ${
      job?.state === 'ready'
        ? html`<p class="ok" role="status">${t('danger.exported', { sections: p.total, size: kib(job.archive?.bytes ?? 0) })}${' '}
            <a href=${job.archive?.download_url} download data-testid="export-download">${t('danger.download')}</a></p>
          <p class="hint">${t('danger.export_kept')} <${When} iso=${job.expires_at} lang=${lang} /></p>`
        : null
    }
  </section>`
}

function Delete({ me, t }) {
  const id = me.organization.id
  const [typed, setTyped] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
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

export function Danger({ me, t, lang }) {
  return html`<h1>${t('danger.title')}</h1>
    <${Export} me=${me} t=${t} lang=${lang} />
    <${Delete} me=${me} t=${t} />`
}
