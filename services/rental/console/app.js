// The console: who is signed in, the language switch, sign-out, and the screens by hash route.
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, loadMe } from './api.js'
import { Engagement, Engagements } from './engagements.js'
import { Home } from './home.js'
import { applyLang, initialLang, remember, roleName, translator } from './i18n.js'
import { Budgets, Invoices as InvoiceList, Refunds, Schedules, Webhooks } from './lists.js'
// the client screens
import { Invoices, Statements } from './billing.js'
import { Disputes, Incidents } from './disputes.js'
import { Batches, Team, Teams } from './teams.js'
import { Market } from './market.js'
import { ListingDetail, Trial } from './market-listing.js'
import { Task, Tasks } from './tasks.js'
// the tenant screens (organization, operations, members, profile, danger zone)
import { tenantScreen } from './tenant.js'
import { Empty, ErrorText, html, Loading } from './ui.js'

const routeOf = () => (location.hash.replace(/^#\/?/, '') || 'home').split('/').map(decodeURIComponent)

function Screen({ route, me, t, lang }) {
  const [name, id, sub] = route
  const props = { me, t, lang, key: `${name}/${id ?? ''}/${sub ?? ''}/${lang}` }
  if (name === 'home') return html`<${Home} ...${props} />`
  if (name === 'market')
    return id === 'listings' && sub
      ? html`<${ListingDetail} id=${sub} ...${props} />`
      : html`<${Market} ...${props} />`
  if (name === 'trials' && id) return html`<${Trial} id=${id} ...${props} />`
  if (name === 'engagements')
    return id ? html`<${Engagement} id=${id} ...${props} />` : html`<${Engagements} ...${props} />`
  if (name === 'tasks') return id ? html`<${Task} id=${id} ...${props} />` : html`<${Tasks} ...${props} />`
  const client = CLIENT_SCREENS[name]
  if (client)
    return id && client.detail
      ? html`<${client.detail} id=${id} ...${props} />`
      : html`<${client.list} ...${props} />`
  const list = LISTS[name]
  if (list) return html`<${list} ...${props} />`
  // the tenant screens
  const tenant = tenantScreen(name, props)
  if (tenant) return tenant
  return html`<${Empty}>${t('not_found')}<//>`
}

const LISTS = {
  budgets: Budgets,
  invoices: InvoiceList,
  refunds: Refunds,
  schedules: Schedules,
  webhooks: Webhooks,
}

// The client screens (money, disputes, incidents, teams, batches): they come before LISTS (the
// console's invoices screen replaces the read-only list); those not in LISTS get a link of their own.
const CLIENT_SCREENS = {
  invoices: { list: Invoices },
  statements: { list: Statements },
  disputes: { list: Disputes },
  incidents: { list: Incidents },
  teams: { list: Teams, detail: Team },
  batches: { list: Batches },
}
const CLIENT_NAV = Object.keys(CLIENT_SCREENS).filter((name) => !LISTS[name])

/** Ends the session here, then at the idp (RP-initiated logout), which sends the browser back to `/`. */
async function signOut() {
  const answer = await api('POST', '/auth/logout')
  location.assign(answer.idp_logout_url ?? '/')
}

function App() {
  const [lang, setLang] = useState(initialLang)
  const [me, setMe] = useState(null)
  const [error, setError] = useState(null)
  const [route, setRoute] = useState(routeOf)
  const [leaving, setLeaving] = useState(false)
  const t = translator(lang)
  useEffect(() => applyLang(lang), [lang])
  useEffect(() => {
    void loadMe().then(setMe, setError)
    const onHash = () => setRoute(routeOf())
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])
  const choose = (next) => {
    remember(next)
    setLang(next)
  }
  const link = (to, label) =>
    html`<a href=${`#/${to}`} aria-current=${route[0] === to ? 'page' : undefined}>${label}</a>`
  return html`<header class="top">
      <a class="brand" href="/">${t('title')}</a>
      <nav aria-label=${t('nav.main')}>
        ${link('home', t('nav.home'))}${link('market', t('nav.market'))}${link('engagements', t('nav.engagements'))}${link('tasks', t('nav.tasks'))}
        ${Object.keys(LISTS).map((name) => link(name, t(`nav.${name}`)))}
        ${CLIENT_NAV.map((name) => link(name, t(`nav.${name}`)))}
        ${link('org', t('nav.org'))}
      </nav>
      <div class="who">
        ${
          me
            ? html`<span class="person" data-testid="person">${me.client.name ?? me.client.email ?? me.client.subject}</span>
              <span class="org"><code dir="ltr">${me.organization.id}</code> · ${roleName(me.organization.role, lang)}</span>`
            : null
        }
        <label for="lang">${t('language')}</label>
        <select id="lang" value=${lang} onChange=${(e) => choose(e.currentTarget.value)}>
          <option value="en">English</option>
          <option value="ar">العربية</option>
        </select>
        <button type="button" disabled=${leaving}
          onClick=${() => {
            setLeaving(true)
            signOut().catch((e) => {
              setLeaving(false)
              setError(e)
            })
          }}>${leaving ? t('signing_out') : t('sign_out')}</button>
      </div>
    </header>
    <main id="main">
      <${ErrorText} error=${error} t=${t} />
      ${me ? html`<${Screen} route=${route} me=${me} t=${t} lang=${lang} />` : error ? null : html`<${Loading} t=${t} />`}
    </main>`
}

const root = document.getElementById('app')
root.textContent = ''
render(html`<${App} />`, root)
