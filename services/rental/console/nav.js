// @ts-check
// The console's navigation, grouped by what a person does: a sidebar on wide screens, a menu that
// the header's button opens on a phone (Escape closes it and gives the focus back to the button).
import { useEffect, useRef } from 'preact/hooks'
import { html } from './ui.js'

/** The groups and their screens (route names of app.js); the label keys are the catalogue's. */
export const NAV_GROUPS = [
  {
    key: 'work',
    items: [
      ['market', 'nav.market'],
      ['engagements', 'nav.engagements'],
      ['tasks', 'nav.tasks'],
      ['batches', 'nav.batches'],
      ['schedules', 'nav.schedules'],
      ['approvals', 'tenant.approvals'],
    ],
  },
  {
    key: 'money',
    items: [
      ['wallet', 'nav.wallet'],
      ['statements', 'nav.statements'],
      ['invoices', 'nav.invoices'],
      ['budgets', 'nav.budgets'],
      ['refunds', 'nav.refunds'],
      ['disputes', 'nav.disputes'],
      ['usage', 'tenant.usage'],
    ],
  },
  {
    key: 'trust',
    items: [
      ['incidents', 'nav.incidents'],
      ['teams', 'nav.teams'],
      ['executions', 'tenant.executions'],
    ],
  },
  {
    key: 'org',
    items: [
      ['org', 'tenant.org'],
      ['members', 'tenant.members'],
      ['onboarding', 'nav.onboarding'],
      ['webhooks', 'nav.webhooks'],
      ['connections', 'tenant.connections'],
      ['profile', 'tenant.profile'],
      ['danger', 'tenant.danger'],
    ],
  },
]

// a detail screen marks its list: a listing or a trial belongs to the Market
const SECTION_OF = { trials: 'market' }

/** The sidebar: Home, then the groups, each a headed list; the current screen has aria-current. */
export function Sidebar({ t, current, open, onClose, children }) {
  const ref = useRef(/** @type {HTMLElement | null} */ (null))
  const section = SECTION_OF[current] ?? current
  useEffect(() => {
    if (!open) return undefined
    ref.current?.querySelector('a')?.focus()
    const onKey = (e) => {
      if (e.key === 'Escape') onClose(true)
    }
    addEventListener('keydown', onKey)
    return () => removeEventListener('keydown', onKey)
  }, [open])
  const link = (to, label) =>
    html`<a href=${`#/${to}`} aria-current=${section === to ? 'page' : undefined}
      onClick=${() => onClose(false)}>${t(label)}</a>`
  // the column carries the sidebar's background the page's whole height; the list inside stays in view
  return html`<div class="sidebar-column"><nav id="sidebar" ref=${ref} class=${open ? 'sidebar open' : 'sidebar'} aria-label=${t('nav.main')}>
    <ul class="nav-home"><li>${link('home', 'nav.home')}</li></ul>
    ${NAV_GROUPS.map(
      ({ key, items }) => html`<div class="nav-group" key=${key}>
        <h2 class="nav-heading" id=${`nav-${key}`}>${t(`nav.group.${key}`)}</h2>
        <ul aria-labelledby=${`nav-${key}`}>
          ${items.map(([to, label]) => html`<li key=${to}>${link(to, label)}</li>`)}
        </ul>
      </div>`,
    )}
    ${children}
  </nav></div>`
}

/** The link past the header and the navigation: it focuses the main region (the hash is the router's). */
export const SkipLink = ({ t }) =>
  html`<a class="skip-link" href="#main" onClick=${(e) => {
    e.preventDefault()
    document.getElementById('main')?.focus()
  }}>${t('nav.skip')}</a>`

/** The phone's menu button: it opens and closes the sidebar. */
export const MenuButton = ({ t, open, onToggle, buttonRef }) =>
  html`<button type="button" class="menu-button" ref=${buttonRef} aria-expanded=${open ? 'true' : 'false'}
    aria-controls="sidebar" onClick=${onToggle}>
    <span class="menu-icon" aria-hidden="true"></span>${t('nav.menu')}</button>`
