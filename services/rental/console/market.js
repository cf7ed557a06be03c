// @ts-check
// The market: one search above what it filters, the catalogue's jobs with their agents (hire one,
// with this browser's key) and the providers' published listings (each opens its detail:
// market-listing.js).
import { useState } from 'preact/hooks'
import { api } from './api.js'
import { filsOf } from './disputes.js'
import { formatNumber, separator } from './i18n.js'
import { KeyPanel } from './key-panel.js'
import { ensureKey } from './keys.js'
import { CopyId } from './names.js'
import { ActionButton, Empty, ErrorText, Fils, html, Loading, useLoad } from './ui.js'

/** Hires `agent` for `job` with this browser's key as the client's, then opens the engagement to sign it. */
async function hire(job, agent) {
  const key = await ensureKey()
  const hired = await api('POST', '/api/engagements', {
    job_id: job.id,
    agent_did: agent.did,
    client_did: key.did,
  })
  location.hash = `#/engagements/${hired.engagement.id}`
}

/** Whether a job of the catalogue matches the search: its words, and its price within the range. */
function jobMatches(job, form) {
  const q = form.q.trim().toLocaleLowerCase()
  const words = [job.title, job.outcome, job.description, ...job.agents.map((a) => a.name)]
    .filter(Boolean)
    .join(' ')
    .toLocaleLowerCase()
  if (q && !q.split(/\s+/).every((w) => words.includes(w))) return false
  const min = form.min_price.trim() ? filsOf(form.min_price) : null
  const max = form.max_price.trim() ? filsOf(form.max_price) : null
  if (min !== null && job.price_fils < min) return false
  if (max !== null && job.price_fils > max) return false
  if (form.availability === 'available' && job.agents.length === 0) return false
  if (form.availability === 'unavailable' && job.agents.length > 0) return false
  return true
}

function Jobs({ jobs, form, searched, t, lang }) {
  const shown = jobs.data ? jobs.data.jobs.filter((j) => !searched || jobMatches(j, form)) : null
  return html`<section aria-labelledby="jobs-title">
    <h2 id="jobs-title">${t('mkt.jobs')}</h2>
    <${ErrorText} error=${jobs.error} t=${t} />
    ${
      !shown
        ? jobs.error
          ? null
          : html`<${Loading} t=${t} />`
        : shown.length === 0
          ? html`<${Empty}>${jobs.data.jobs.length === 0 ? t('market.empty') : t('mkt.no_jobs_match')}<//>`
          : html`${searched ? html`<p class="hint">${t('mkt.jobs_found', { n: formatNumber(shown.length, lang) })}</p>` : null}
            <ul class="cards" data-testid="jobs">${shown.map(
              (job) => html`<li class="card job" key=${job.id} data-job=${job.id}>
              <h3>${job.title ?? job.outcome}</h3>
              <p>${job.description ?? job.outcome}</p>
              <p><${Fils} fils=${job.price_fils} currency=${job.currency} lang=${lang} /> ${t('market.per_task')}</p>
              ${
                job.agents.length === 0
                  ? html`<p class="hint">${t('market.no_agents')}</p>`
                  : job.agents.map(
                      (agent) => html`<div class="agent" key=${agent.did} data-agent=${agent.did}>
                      <p><strong><bdi dir="auto" data-testid="agent-name">${agent.name}</bdi></strong>
                        <small class="hint"> ${t('eng.provider')} <bdi dir="auto">${agent.provider.name}</bdi></small></p>
                      <${CopyId} label=${t('task.agent_did')} value=${agent.did} t=${t} compact=${true} />
                      <${ActionButton} kind="primary" t=${t} busy=${t('market.hiring')}
                        label=${t('market.hire', { agent: agent.name ?? agent.id })}
                        action=${() => hire(job, agent)} />
                    </div>`,
                    )
              }
            </li>`,
            )}</ul>`
    }
  </section>`
}

export function Market({ t, lang }) {
  const jobs = useLoad(`/api/jobs?lang=${lang}`)
  const [form, setForm] = useState(BLANK)
  const [searched, setSearched] = useState(BLANK)
  const [query, setQuery] = useState(() => queryOf(BLANK, lang))
  const [invalid, setInvalid] = useState(false)
  const search = (e) => {
    e.preventDefault()
    const next = queryOf(form, lang)
    setInvalid(next === null)
    if (next === null) return
    setQuery(next)
    setSearched(form)
  }
  const clear = () => {
    setForm(BLANK)
    setSearched(BLANK)
    setInvalid(false)
    setQuery(queryOf(BLANK, lang))
  }
  const active = searched !== BLANK
  return html`<h1>${t('market.title')}</h1>
    <p>${t('market.intro')}</p>
    <${SearchForm} form=${form} setForm=${setForm} onSearch=${search} onClear=${active ? clear : null} t=${t} />
    ${invalid ? html`<p class="error" role="alert">${t('amount.invalid')}</p>` : null}
    <${Jobs} jobs=${jobs} form=${searched} searched=${active} t=${t} lang=${lang} />
    <${Listings} query=${query} searched=${active} t=${t} lang=${lang} />
    <${KeyPanel} t=${t} lang=${lang} />`
}

const SORTS = ['relevance', 'price', 'newest']
const AVAILABILITY = ['', 'available', 'limited', 'unavailable']

/** The search's query string: only the filled fields, prices in fils (null: a price is not an amount). */
function queryOf(form, lang) {
  const query = new URLSearchParams({ lang, limit: '20', sort: form.sort })
  for (const name of ['q', 'tag', 'language', 'availability'])
    if (form[name].trim()) query.set(name, form[name].trim())
  for (const name of ['min_price', 'max_price']) {
    if (!form[name].trim()) continue
    const fils = filsOf(form[name])
    if (fils === null) return null
    query.set(name, String(fils))
  }
  return query.toString()
}

const BLANK = {
  q: '',
  tag: '',
  language: '',
  min_price: '',
  max_price: '',
  availability: '',
  sort: 'relevance',
}

/** The one search, above what it filters: the catalogue's jobs (here) and the listings (the API). */
function SearchForm({ form, setForm, onSearch, onClear, t }) {
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value })
  const field = (
    name,
    extra = {},
  ) => html`<p class="field"><label for=${`ls-${name}`}>${t(`search.${name}`)}</label>
    <input id=${`ls-${name}`} value=${form[name]} onInput=${set(name)} ...${extra} /></p>`
  return html`<form class="form inline card" role="search" aria-label=${t('mkt.search')} data-testid="listing-search" onSubmit=${onSearch}>
    ${field('q', { type: 'search' })}${field('tag')}${field('language', { dir: 'ltr', size: 6 })}
    ${field('min_price', { inputmode: 'decimal', size: 8 })}${field('max_price', { inputmode: 'decimal', size: 8 })}
    <p class="field"><label for="ls-availability">${t('search.availability')}</label>
      <select id="ls-availability" value=${form.availability} onChange=${set('availability')}>
        ${AVAILABILITY.map((a) => html`<option value=${a}>${t(a ? `availability.${a}` : 'search.any')}</option>`)}
      </select></p>
    <p class="field"><label for="ls-sort">${t('search.sort')}</label>
      <select id="ls-sort" value=${form.sort} onChange=${set('sort')}>
        ${SORTS.map((s) => html`<option value=${s}>${t(`search.sort.${s}`)}</option>`)}
      </select></p>
    <button type="submit" class="primary">${t('search.button')}</button>
    ${onClear ? html`<button type="button" onClick=${onClear}>${t('mkt.clear')}</button>` : null}
    <p class="hint">${t('mkt.search_hint')}</p>
  </form>`
}

function Listings({ query, searched, t, lang }) {
  const listings = useLoad(`/api/market/listings?${query}`)
  const rows = listings.data?.listings
  return html`<section aria-labelledby="listings-title">
    <h2 id="listings-title">${t('market.listings')}</h2>
    <${ErrorText} error=${listings.error} t=${t} />
    ${
      !rows
        ? listings.error
          ? null
          : html`<${Loading} t=${t} />`
        : rows.length === 0
          ? html`<${Empty}>${t(searched ? 'search.none' : 'market.no_listings')}<//>`
          : html`<p class="hint" aria-live="polite">${t('search.found', { n: listings.data?.total })}</p>
            <ul class="cards" data-testid="listings">${rows.map(
              (l) => html`<li class="card" key=${l.id} data-listing=${l.id}>
              <h3><a href=${`#/market/listings/${encodeURIComponent(l.id)}`}><bdi dir="auto">${l.title}</bdi></a></h3><p dir="auto">${l.description}</p>
              <p><bdi class="money">${l.price.display}</bdi> ${t('market.per_task')}</p>
              <p class="hint">${t(`availability.${l.availability.state}`)}${l.tags.length ? `${separator(lang)}${l.tags.join(lang === 'ar' ? '، ' : ', ')}` : ''}</p>
              <${CopyId} label=${t('task.agent_did')} value=${l.agent_did} t=${t} compact=${true} />
            </li>`,
            )}</ul>`
    }
  </section>`
}
