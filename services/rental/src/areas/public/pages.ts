import { cspHash, type Html, html } from '@svc/kit'
import { CATALOGUES, formatFils, type Lang, type MessageKey } from './i18n.ts'
import type { DependencyStatus } from './status.ts'

const STYLE = `body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
nav a{margin-inline-end:1rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.5rem;text-align:start;vertical-align:top}
code{font-size:.85em;word-break:break-all}.ok{color:#176b2c}.down{color:#a11}`

/**
 * The pages' policy: no script at all, their one inline style by its hash, nothing framed; the
 * other security headers are the kit's, on every HTML answer.
 */
export const PAGE_HEADERS = {
  'content-security-policy': `default-src 'none'; style-src ${cspHash(STYLE)}; img-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`,
  'content-type': 'text/html; charset=utf-8',
}

/** Signed in: the way to the console; signed out: the way to sign in. */
const account = (lang: Lang, signedIn: boolean) =>
  signedIn
    ? html`<a href="/console?lang=${lang}">${t(lang, 'nav.console')}</a>`
    : html`<a href="/auth/login?ui_locales=${lang}">${t(lang, 'nav.sign_in')}</a>`

export function layout(lang: Lang, title: string, body: Html, signedIn = false): string {
  const { dir, messages: t } = CATALOGUES[lang]
  return html`<!doctype html>
<html lang="${lang}" dir="${dir}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · ${t['app.title']}</title><style>${STYLE}</style></head>
<body>
<nav><a href="/?lang=${lang}">${t['app.title']}</a><a href="/market?lang=${lang}">${t['nav.market']}</a><a href="/status.html?lang=${lang}">${t['nav.status']}</a>${account(lang, signedIn)}</nav>
<main>${body}</main>
</body></html>`.toString()
}

const t = (lang: Lang, key: MessageKey) => CATALOGUES[lang].messages[key]

export const landingPage = (lang: Lang, signedIn = false) =>
  layout(
    lang,
    t(lang, 'app.title'),
    html`<h1>${t(lang, 'app.title')}</h1><p>${t(lang, 'app.tagline')}</p>
<p>${account(lang, signedIn)} · <a href="/market?lang=${lang}">${t(lang, 'nav.market')}</a></p>`,
    signedIn,
  )

export interface MarketJob {
  title: string
  outcome: string
  description: string
  price_fils: number
  agents: Array<{ name: string; did: string; provider: { name: string } }>
}

/** A published listing as the public page shows it (its price already formatted by the kit's `money`). */
export interface MarketListing {
  title: string
  description: string
  tags: string[]
  price: { display: string }
  availability: { state: 'available' | 'limited' | 'unavailable' }
  agent_did: string
}

const listingsSection = (lang: Lang, q: string, listings: MarketListing[]) =>
  html`<h2>${t(lang, 'market.listings')}</h2>
<form method="get" action="/market" role="search"><input type="hidden" name="lang" value="${lang}">
<input type="search" name="q" value="${q}" maxlength="200" aria-label="${t(lang, 'market.search')}"> <button type="submit">${t(lang, 'market.search')}</button></form>
${
  listings.length === 0
    ? html`<p>${t(lang, 'market.no_listings')}</p>`
    : html`<table class="listings"><tbody>
${listings.map(
  (l) =>
    html`<tr><td><strong>${l.title}</strong><br>${l.description}<br><small>${l.tags.join(' · ')}</small><br><code dir="ltr">${l.agent_did}</code></td>
<td><bdi>${l.price.display}</bdi> ${t(lang, 'market.per_task')}<br><small>${t(lang, `market.${l.availability.state}`)}</small></td></tr>`,
)}
</tbody></table>`
}`

export const marketPage = (
  lang: Lang,
  jobs: MarketJob[],
  q = '',
  listings: MarketListing[] = [],
  signedIn = false,
) =>
  layout(
    lang,
    t(lang, 'market.title'),
    html`<h1>${t(lang, 'market.title')}</h1><p>${t(lang, 'market.intro')}</p>
${listingsSection(lang, q, listings)}
${
  jobs.length === 0
    ? html`<p>${t(lang, 'market.empty')}</p>`
    : html`<table><thead><tr><th></th><th>${t(lang, 'market.price')}</th><th>${t(lang, 'market.agents')}</th></tr></thead><tbody>
${jobs.map(
  (job) =>
    html`<tr><td><strong>${job.title}</strong><br>${job.outcome}<br><small>${job.description}</small></td>
<td><bdi>${formatFils(job.price_fils)} ${t(lang, 'currency.aed')}</bdi></td>
<td>${
      job.agents.length
        ? job.agents.map(
            (a) =>
              html`${a.name}<br><small>${t(lang, 'market.provider')}: ${a.provider.name}</small><br><code dir="ltr">${a.did}</code><br>`,
          )
        : t(lang, 'market.no_agents')
    }</td></tr>`,
)}
</tbody></table>`
}`,
    signedIn,
  )

export const statusPage = (
  lang: Lang,
  status: {
    service: string
    version: string
    status: string
    dependencies: Record<string, DependencyStatus>
    incidents?: StatusIncident[]
  },
) =>
  layout(
    lang,
    t(lang, 'status.title'),
    html`<h1>${t(lang, 'status.title')}</h1><p><bdi>${status.service} ${status.version}: ${status.status}</bdi></p>
<table><thead><tr><th>${t(lang, 'status.dependency')}</th><th>${t(lang, 'status.state')}</th></tr></thead><tbody>
${Object.entries(status.dependencies).map(
  ([name, dep]) =>
    html`<tr><td><bdi>${name}</bdi> <code dir="ltr">${dep.url}</code></td><td class="${dep.reachable ? 'ok' : 'down'}">${
      dep.reachable ? t(lang, 'status.reachable') : t(lang, 'status.unreachable')
    }</td></tr>`,
)}
</tbody></table>
${incidentsSection(lang, status.incidents ?? [])}`,
  )

/** An open incident as the status page shows it (an agent's: no client, no impact). */
export interface StatusIncident {
  kind: 'platform' | 'agent'
  agent_did?: string | null
  severity: string
  summary: string
  impact?: string
  since: string
}

const incidentsSection = (lang: Lang, incidents: StatusIncident[]) =>
  html`<h2>${t(lang, 'status.incidents')}</h2>${
    incidents.length === 0
      ? html`<p class="ok">${t(lang, 'status.no_incidents')}</p>`
      : html`<table class="incidents"><thead><tr><th>${t(lang, 'status.severity')}</th><th>${t(lang, 'status.incident')}</th><th>${t(lang, 'status.since')}</th></tr></thead><tbody>
${incidents.map(
  (i) =>
    html`<tr><td class="down"><bdi>${i.severity}</bdi></td><td><strong>${i.kind === 'platform' ? t(lang, 'status.platform') : t(lang, 'status.agent')}</strong>: ${i.summary}${
      i.impact ? html`<br><small>${i.impact}</small>` : ''
    }${i.agent_did ? html`<br><code dir="ltr">${i.agent_did}</code>` : ''}</td><td><time datetime="${i.since}" dir="ltr">${i.since.slice(0, 16).replace('T', ' ')} UTC</time></td></tr>`,
)}
</tbody></table>`
  }`
