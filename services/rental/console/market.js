// The market: the catalogue's jobs with their agents (hire one, with this browser's key) and the
// providers' published listings.
import { api } from './api.js'
import { KeyPanel } from './key-panel.js'
import { ensureKey } from './keys.js'
import { ActionButton, Did, Empty, ErrorText, Fils, html, Loading, useLoad } from './ui.js'

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

export function Market({ t, lang }) {
  const jobs = useLoad('/api/jobs')
  const listings = useLoad(`/api/market/listings?lang=${lang}&limit=20`)
  return html`<h1>${t('market.title')}</h1>
    <p>${t('market.intro')}</p>
    <${ErrorText} error=${jobs.error} t=${t} />
    ${
      !jobs.data
        ? html`<${Loading} t=${t} />`
        : jobs.data.jobs.length === 0
          ? html`<${Empty}>${t('market.empty')}<//>`
          : html`<ul class="cards">${jobs.data.jobs.map(
              (job) => html`<li class="card job" key=${job.id} data-job=${job.id}>
              <h2>${job.title ?? job.outcome}</h2>
              <p>${job.description ?? job.outcome}</p>
              <p><${Fils} fils=${job.price_fils} currency=${job.currency} lang=${lang} /> ${t('market.per_task')}</p>
              ${
                job.agents.length === 0
                  ? html`<p class="hint">${t('market.no_agents')}</p>`
                  : job.agents.map(
                      (agent) => html`<div class="agent" key=${agent.did}>
                      <${Did} did=${agent.did} />
                      <${ActionButton} kind="primary" t=${t} busy=${t('market.hiring')}
                        label=${t('market.hire', { agent: agent.name ?? agent.id })}
                        action=${() => hire(job, agent)} />
                    </div>`,
                    )
              }
            </li>`,
            )}</ul>`
    }
    <section aria-labelledby="listings-title">
      <h2 id="listings-title">${t('market.listings')}</h2>
      <${ErrorText} error=${listings.error} t=${t} />
      ${
        listings.data?.listings?.length === 0
          ? html`<${Empty}>${t('market.no_listings')}<//>`
          : html`<ul class="cards">${(listings.data?.listings ?? []).map(
              (l) => html`<li class="card" key=${l.id}>
              <h3>${l.title}</h3><p>${l.description}</p>
              <p><bdi class="money">${l.price.display}</bdi> ${t('market.per_task')}</p>
              <${Did} did=${l.agent_did} />
            </li>`,
            )}</ul>`
      }
    </section>
    <${KeyPanel} t=${t} lang=${lang} />`
}
