// @ts-check
// The console: who is signed in, the language switch, sign-out, and the screens by hash route.
import { render } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, loadMe, setApiLang, SIGNED_OUT } from './api.js'
import { Engagement, Engagements } from './engagements.js'
import { Home } from './home.js'
import { applyLang, initialLang, remember, roleName, separator, translator } from './i18n.js'
import { Budgets, Refunds } from './lists.js'
import { Automation, Schedules, Webhooks } from './automation.js'
import { Batch, Batches } from './batches.js'
import { Onboarding } from './onboarding.js'
import { Toasts } from './toast.js'
import { Wallet } from './wallet.js'
// the client screens
import { Invoices, Statements } from './billing.js'
import { Disputes, Incidents } from './disputes.js'
import { Team, Teams } from './teams.js'
import { Market } from './market.js'
import { MenuButton, SkipLink, Sidebar } from './nav.js'
import { ListingDetail, Trial } from './market-listing.js'
import { Task, Tasks } from './tasks.js'
// the tenant screens (organization, operations, members, profile, danger zone)
import { tenantScreen } from './tenant.js'
import { Empty, ErrorText, html, Loading, useLoad } from './ui.js'

// the screen a person was on when the session ended, back after signing in again (app start)
const RETURN_KEY = 'console.return'

/** Signs in again: the reload goes through the idp and back, to the screen kept here. */
function signInAgain() {
  try {
    globalThis.sessionStorage.setItem(RETURN_KEY, location.hash)
  } catch {}
  location.reload()
}

/** Back on the screen kept by `signInAgain`, when the sign-in came back without it. */
function restoreScreen() {
  try {
    const kept = globalThis.sessionStorage.getItem(RETURN_KEY)
    globalThis.sessionStorage.removeItem(RETURN_KEY)
    if (kept?.startsWith('#/') && (location.hash === '' || location.hash === '#/'))
      globalThis.history.replaceState(null, '', kept)
  } catch {}
}

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
  // the old place of schedules and webhooks: its deep link goes on to Webhooks
  if (name === 'automation') return html`<${Automation} />`
  // the tenant screens
  const tenant = tenantScreen(name, props)
  if (tenant) return tenant
  return html`<${Empty}>${t('not_found')}<//>`
}

const LISTS = {
  budgets: Budgets,
  refunds: Refunds,
  schedules: Schedules,
  webhooks: Webhooks,
}

// The client screens (money, disputes, incidents, teams, batches).
const CLIENT_SCREENS = {
  invoices: { list: Invoices },
  statements: { list: Statements },
  disputes: { list: Disputes },
  incidents: { list: Incidents },
  teams: { list: Teams, detail: Team },
  batches: { list: Batches, detail: Batch },
  wallet: { list: Wallet },
  onboarding: { list: Onboarding, detail: Onboarding },
}

/**
 * The member's stored language made the console's (the API answers in the stored one first): at
 * sign-in when they differ, and at each choice.
 */
async function keepLocale(lang) {
  setApiLang(lang)
  const current = await api('GET', '/api/locale')
  if (current.locale !== lang) await api('POST', '/api/locale', { locale: lang })
}

/**
 * Ends the session here, then at the idp (RP-initiated logout) in the console's language, which
 * sends the browser back to `/` (the landing page, in the language the console's cookie keeps).
 */
async function signOut(lang) {
  const answer = await api('POST', `/auth/logout?lang=${lang}`)
  location.assign(answer.idp_logout_url ?? '/')
}

/** Each cell of a list table is labelled with its column's heading: below 600 px the rows become cards. */
function labelCells(root) {
  for (const table of root.querySelectorAll('table.list')) {
    const headings = [...table.querySelectorAll('thead th')].map((th) => th.textContent.trim())
    for (const row of table.querySelectorAll('tbody tr'))
      [...row.children].forEach((cell, i) => {
        if (headings[i] && cell.dataset.label !== headings[i]) cell.dataset.label = headings[i]
      })
  }
}

function useLabelledCells() {
  useEffect(() => {
    const main = document.getElementById('main')
    if (!main) return undefined
    const observer = new globalThis.MutationObserver(() => labelCells(main))
    observer.observe(main, { childList: true, subtree: true, characterData: true })
    return () => observer.disconnect()
  }, [])
}

// the account (who, language, sign-out) sits in the header on wide screens, in the menu on a phone
const NARROW = '(max-width: 56rem)'

function useNarrow() {
  const [narrow, setNarrow] = useState(() => globalThis.matchMedia(NARROW).matches)
  useEffect(() => {
    const query = globalThis.matchMedia(NARROW)
    const onChange = () => setNarrow(query.matches)
    query.addEventListener('change', onChange)
    return () => query.removeEventListener('change', onChange)
  }, [])
  return narrow
}

/** The member's role and the organization's name (in the console's language); its id stays on Home and the Overview. */
function OrgLine({ me, lang }) {
  const org = useLoad(`/v1/org?lang=${lang}`)
  return html`<p class="org">${roleName(me.organization.role, lang)}${
    org.data ? html`${separator(lang)}<bdi dir="auto" data-testid="header-org">${org.data.name}</bdi>` : null
  }</p>`
}

function Account({ me, t, lang, choose, onError, inHeader }) {
  const [leaving, setLeaving] = useState(false)
  return html`<section class=${inHeader ? 'account account-top' : 'account'} aria-labelledby="account-title">
    <h2 class="nav-heading" id="account-title">${t('nav.account')}</h2>
    ${
      me
        ? html`<p class="person" data-testid="person" dir="auto">${me.client.name ?? me.client.email ?? me.client.subject}</p>
          <${OrgLine} me=${me} lang=${lang} />`
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
        signOut(lang).catch((e) => {
          setLeaving(false)
          onError(e)
        })
      }}>${leaving ? t('signing_out') : t('sign_out')}</button>
  </section>`
}

function App() {
  const [lang, setLang] = useState(initialLang)
  const [me, setMe] = useState(/** @type {import('./api-types').Answer<'GET', '/api/me'> | null} */ (null))
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const [route, setRoute] = useState(routeOf)
  const [menuOpen, setMenuOpen] = useState(false)
  const [signedOut, setSignedOut] = useState(false)
  const menuButton = useRef(/** @type {HTMLButtonElement | null} */ (null))
  const t = translator(lang)
  useEffect(() => applyLang(lang), [lang])
  useEffect(() => {
    void loadMe()
      .then(async (who) => {
        await keepLocale(lang).catch(() => undefined)
        return who
      })
      .then(setMe, setError)
    const onHash = () => {
      setRoute(routeOf())
      setMenuOpen(false)
    }
    const onSignedOut = () => setSignedOut(true)
    addEventListener('hashchange', onHash)
    addEventListener(SIGNED_OUT, onSignedOut)
    return () => {
      removeEventListener('hashchange', onHash)
      removeEventListener(SIGNED_OUT, onSignedOut)
    }
  }, [])
  useLabelledCells()
  const narrow = useNarrow()
  const choose = (next) => {
    remember(next)
    // the page turns at once; the screens load again in the new language once the API speaks it
    applyLang(next)
    void keepLocale(next)
      .catch(() => undefined)
      .then(() => setLang(next))
  }
  const closeMenu = (giveFocusBack) => {
    setMenuOpen(false)
    if (giveFocusBack) menuButton.current?.focus()
  }
  const account = html`<${Account} me=${me} t=${t} lang=${lang} choose=${choose} onError=${setError} inHeader=${!narrow} />`
  return html`<${SkipLink} t=${t} />
    <header class="top">
      <${MenuButton} t=${t} open=${menuOpen} buttonRef=${menuButton} onToggle=${() => setMenuOpen(!menuOpen)} />
      <a class="brand" href="#/home">${t('title')}</a>
      ${narrow ? null : account}
    </header>
    <div class="shell">
      <${Sidebar} t=${t} current=${route[0]} open=${menuOpen} onClose=${closeMenu}>${narrow ? account : null}<//>
      <main id="main" tabindex="-1">
        ${
          signedOut
            ? html`<p class="error" role="alert" data-testid="signed-out">${t('error.signed_out')}${' '}
              <button type="button" class="primary" onClick=${signInAgain}>${t('session.sign_in_again')}</button></p>`
            : html`<${ErrorText} error=${error} t=${t} />`
        }
        ${me ? html`<${Screen} route=${route} me=${me} t=${t} lang=${lang} />` : error ? null : html`<${Loading} t=${t} />`}
      </main>
      <${Toasts} t=${t} />
    </div>`
}

restoreScreen()
const root = /** @type {HTMLElement} */ (document.getElementById('app'))
root.textContent = ''
render(html`<${App} />`, root)
