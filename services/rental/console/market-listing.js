// @ts-check
// A market listing (its terms, price, models and the agent's rating), its free trial started from
// here, and the trial: tasks left, its window, a free task with its output, and "Hire", which
// converts it into the pending engagement signed in this browser as hiring does (engagements.js).
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { useFieldProblems } from './field-check.js'
import { formatNumber, separator } from './i18n.js'
import { ensureKey } from './keys.js'
import { CopyId, dotted } from './names.js'
import { ActionButton, Empty, ErrorText, html, Loading, useLoad, When } from './ui.js'

const value = (v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v))

function Rating({ did, t, lang }) {
  const ratings = useLoad(`/api/agents/${encodeURIComponent(did)}/ratings?limit=1`)
  if (ratings.error) return html`<${ErrorText} error=${ratings.error} t=${t} />`
  if (!ratings.data) return html`<${Loading} t=${t} />`
  const { count, mean } = ratings.data
  return html`<span data-testid="rating">${
    count === 0
      ? t('listing.no_ratings')
      : t('listing.rating', {
          mean: formatNumber(mean, lang, { maximumFractionDigits: 1 }),
          n: formatNumber(count, lang),
        })
  }</span>`
}

/** Starts the listing's trial with this browser's key as the client's (it signs if the trial is hired). */
async function startTrial(listing) {
  const key = await ensureKey()
  const trial = await api('POST', '/api/trials', { listing_id: listing.id, client_did: key.did })
  location.hash = `#/trials/${trial.id}`
}

/** "Try it free", or the way back to the organization's live trial of the listing. */
function TryIt({ listing, t, lang }) {
  const trials = useLoad(`/api/trials?state=active&limit=100&lang=${lang}`)
  if (!trials.data && !trials.error) return html`<${Loading} t=${t} />`
  const live = trials.data?.trials.find((x) => x.listing.id === listing.id)
  if (live)
    return html`<p data-testid="live-trial">${t('listing.live_trial')} <a href=${`#/trials/${live.id}`}>${t('listing.open_trial')}</a></p>`
  return html`<p class="hint">${t('listing.trial_hint')}</p>
    <${ActionButton} kind="primary" t=${t} label=${t('trial.start')} busy=${t('trial.starting')}
      action=${() => startTrial(listing)} />`
}

export function ListingDetail({ id, t, lang }) {
  const loaded = useLoad(`/api/market/listings/${encodeURIComponent(id)}?lang=${lang}`)
  const l = loaded.data
  const back = html`<p><a href="#/market"><span class="back-arrow" aria-hidden="true">←</span> ${t('market.title')}</a></p>`
  if (loaded.error && !l) return html`${back}<${ErrorText} error=${loaded.error} t=${t} />`
  if (!l) return html`<${Loading} t=${t} />`
  const terms = Object.entries(l.sla)
  return html`${back}
    <h1 dir="auto">${l.title}</h1>
    <section class="card" data-testid="listing">
      <p dir="auto">${l.description}</p>
      <dl>
        <dt>${t('eng.price')}</dt><dd><bdi class="money">${l.price.display}</bdi> ${t('market.per_task')}</dd>
        ${l.package_price ? html`<dt>${t('listing.package_price')}</dt><dd><bdi class="money">${l.package_price.display}</bdi></dd>` : null}
        <dt>${t('listing.availability')}</dt><dd>${t(`availability.${l.availability.state}`)}${
          l.availability.until
            ? html`${separator(lang)}<${When} iso=${l.availability.until} lang=${lang} />`
            : null
        }</dd>
        <dt>${t('listing.rating_title')}</dt><dd><${Rating} did=${l.agent_did} t=${t} lang=${lang} /></dd>
        <dt>${t('eng.agent')}</dt><dd><${CopyId} label=${t('task.agent_did')} value=${l.agent_did} t=${t} /></dd>
        ${l.skills.length ? html`<dt>${t('listing.skills')}</dt><dd>${l.skills.join(', ')}</dd>` : null}
        ${l.languages.length ? html`<dt>${t('listing.languages')}</dt><dd dir="ltr">${l.languages.join(', ')}</dd>` : null}
      </dl>
      <h2>${t('listing.terms')}</h2>
      ${
        terms.length === 0
          ? html`<p class="hint">${t('listing.no_terms')}</p>`
          : html`<dl class="terms" data-testid="terms">${terms.map(
              ([name, v]) => html`<dt key=${name}>${name}</dt><dd><bdi dir="ltr">${value(v)}</bdi></dd>`,
            )}</dl>`
      }
      <h2>${t('listing.models')}</h2>
      ${
        l.models.length === 0
          ? html`<p class="hint">${t('listing.no_models')}</p>`
          : html`<ul data-testid="models">${l.models.map(
              (m) =>
                html`<li key=${m.id}><code dir="ltr">${m.id}${m.version ? `@${m.version}` : ''}</code>${
                  m.provider ? `${separator(lang)}${m.provider}` : ''
                }</li>`,
            )}</ul>`
      }
      ${
        l.availability.state === 'unavailable' || l.availability.state === 'unpublished'
          ? html`<p class="hint">${t('listing.cannot_try')}</p>`
          : html`<${TryIt} listing=${l} t=${t} lang=${lang} />`
      }
    </section>`
}

/** Converts the trial for `jobId` (a job its agent serves), signed by this browser's key, then opens it. */
async function hire(trial, jobId) {
  const key = await ensureKey()
  const hired = await api('POST', `/api/trials/${encodeURIComponent(trial.id)}/convert`, {
    job_id: jobId,
    client_did: key.did,
  })
  location.hash = `#/engagements/${hired.engagement.id}`
}

function TrialTask({ trial, t, lang, onRan }) {
  const [text, setText] = useState('')
  const [task, setTask] = useState(
    /** @type {import('./api-types').Answer<'POST', '/api/trials/{id}/tasks'>['task'] | null} */ (null),
  )
  const fields = useFieldProblems()
  const run = async () => {
    fields.check({ 'trial-text': text.trim() ? null : t('field.task_text') })
    const answer = await api('POST', `/api/trials/${encodeURIComponent(trial.id)}/tasks`, { text })
    setTask(answer.task)
    onRan(answer.trial)
  }
  return html`<section class="card" aria-labelledby="trial-task">
    <h2 id="trial-task">${t('trial.task')}</h2>
    ${
      trial.state === 'active'
        ? html`<label for="trial-text">${t('task.text')}</label>
          <textarea id="trial-text" dir="auto" rows="4" maxlength="20000" required value=${text} ...${fields.at('trial-text')}
            onInput=${(e) => setText(e.currentTarget.value)}></textarea>
          ${fields.note('trial-text')}
          <${ActionButton} kind="primary" t=${t} label=${t('trial.run')} busy=${t('task.running')} action=${run} />`
        : html`<p class="hint">${t(`trial.no_more.${trial.state}`)}</p>`
    }
    ${
      task
        ? html`<h3>${t('task.output')}</h3>${
            task.output
              ? html`<pre class="output" dir="auto" data-testid="trial-output">${task.output.text ?? JSON.stringify(task.output.data, null, 2)}</pre>`
              : html`<p class="hint">${t(`state.${task.state}`)}${separator(lang)}<a href=${`#/tasks/${task.id}`}>${t('trial.open_task')}</a></p>`
          }`
        : null
    }
  </section>`
}

function Hire({ trial, t }) {
  const jobs = useLoad('/api/jobs')
  const served = (jobs.data?.jobs ?? []).filter((j) => j.agents.some((a) => a.did === trial.agent_did))
  const [jobId, setJobId] = useState('')
  if (trial.engagement_id)
    return html`<p><a href=${`#/engagements/${trial.engagement_id}`}>${t('trial.engagement')}</a></p>`
  if (jobs.error) return html`<${ErrorText} error=${jobs.error} t=${t} />`
  if (!jobs.data) return html`<${Loading} t=${t} />`
  if (served.length === 0) return html`<${Empty}>${t('trial.no_job')}<//>`
  const chosen = jobId || served[0].id
  return html`<section class="card" aria-labelledby="trial-hire">
    <h2 id="trial-hire">${t('trial.hire_title')}</h2>
    <p>${t('trial.hire_hint')}</p>
    <p class="field"><label for="trial-job">${t('eng.job')}</label>
      <select id="trial-job" value=${chosen} onChange=${(e) => setJobId(e.currentTarget.value)}>
        ${served.map((j) => html`<option value=${j.id}>${j.title ?? j.outcome ?? j.id}</option>`)}
      </select></p>
    <${ActionButton} kind="primary" t=${t} label=${t('trial.hire')} busy=${t('market.hiring')}
      action=${() => hire(trial, chosen)} />
  </section>`
}

export function Trial({ id, t, lang }) {
  const loaded = useLoad(`/api/trials/${encodeURIComponent(id)}?lang=${lang}`)
  const [fresh, setFresh] = useState(
    /** @type {import('./api-types').Answer<'GET', '/api/trials/{id}'> | null} */ (null),
  )
  const trial = fresh ?? loaded.data
  if (loaded.error && !trial) return html`<${ErrorText} error=${loaded.error} t=${t} />`
  if (!trial) return html`<${Loading} t=${t} />`
  return html`<p><a href=${`#/market/listings/${encodeURIComponent(trial.listing.id)}`}><span class="back-arrow" aria-hidden="true">←</span> <bdi dir="auto">${trial.listing.title}</bdi></a></p>
    <h1>${t('trial.title', { title: trial.listing.title })}</h1>
    <section class="card" data-testid="trial" data-state=${trial.state}>
      <dl>
        <dt>${t('eng.state')}</dt><dd>${t(`trial.state.${trial.state}`)}</dd>
        <dt>${t('trial.left')}</dt><dd data-testid="tasks-left">${t('trial.left_of', {
          left: formatNumber(trial.tasks_left, lang),
          n: formatNumber(trial.tasks_allowed, lang),
        })}</dd>
        <dt>${t('trial.window')}</dt><dd>${t('trial.until')} <${When} iso=${trial.ends_at} lang=${lang} /></dd>
        <dt>${t('trial.then')}</dt><dd><bdi class="money">${trial.listing.price.display}</bdi> ${t('market.per_task')}</dd>
      </dl>
      ${
        trial.tasks.length
          ? html`<ul>${trial.tasks.map(
              (x, i) =>
                html`<li key=${x.id}>${dotted(
                  [
                    html`<a href=${`#/tasks/${x.id}`}>${t('trial.task_n', { n: formatNumber(i + 1, lang) })}</a>`,
                    t(`state.${x.state}`),
                    html`<${When} iso=${x.created_at} lang=${lang} />`,
                  ],
                  lang,
                )}</li>`,
            )}</ul>`
          : html`<p class="hint">${t('trial.no_tasks')}</p>`
      }
    </section>
    <${TrialTask} trial=${trial} t=${t} lang=${lang} onRan=${setFresh} />
    <${Hire} trial=${trial} t=${t} />`
}
