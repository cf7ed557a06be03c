// @ts-check
// Every list's paging and filters: `usePaged` loads one page of a list route (limit and offset, or
// the route's cursor), `Pager` moves between pages and says which rows are shown, `Filters` sets
// the query fields the route offers (a state, a kind, a search). A change of filter goes back to the
// first page.
import { useState } from 'preact/hooks'
import { useLoadAgain } from './reload.js'
import { formatNumber } from './i18n.js'
import { html } from './ui.js'

/** The rows a page shows when a screen does not say. */
export const PAGE_SIZE = 20

/**
 * @typedef {{ limit?: number, field?: string, filters?: Record<string, string | undefined>, cursor?: { param: string, next: string }, reloadKey?: unknown }} PagedOptions
 */

/**
 * One page of the list at `path` (which may carry a query already): `limit` and `offset`, or with
 * `cursor` the route's own cursor (`param` sent, `next` the answer's field naming the next one).
 * `filters` with an empty value are left out; `field` names the rows (else the answer's first array). Answers `useLoad`'s `{data, error, reload}` and the
 * `page` a `Pager` shows.
 * @param {string} path
 * @param {PagedOptions} [options]
 */
export function usePaged(path, { limit = PAGE_SIZE, field, filters = {}, cursor, reloadKey } = {}) {
  const chosen = Object.entries(filters).filter(([, value]) => value !== undefined && value !== '')
  const key = JSON.stringify([path, chosen])
  // where the list is: an offset, or the cursors of the pages seen (the first has none)
  const [at, setAt] = useState({ key, offset: 0, cursors: [''] })
  const here = at.key === key ? at : { key, offset: 0, cursors: [''] }
  const query = new URLSearchParams(/** @type {string[][]} */ (chosen))
  query.set('limit', String(limit))
  const current = here.cursors[here.cursors.length - 1]
  if (cursor) {
    if (current) query.set(cursor.param, current)
  } else if (here.offset > 0) query.set('offset', String(here.offset))
  const loaded = useLoadAgain(`${path}${path.includes('?') ? '&' : '?'}${query}`, reloadKey)
  const data = loaded.data
  const rows = data ? (field ? data[field] : Object.values(data).find(Array.isArray)) : undefined
  const total = typeof data?.total === 'number' ? data.total : undefined
  const next = cursor ? (data?.[cursor.next] ?? null) : null
  const count = rows?.length ?? 0
  const page = {
    from: count === 0 ? 0 : cursor ? (here.cursors.length - 1) * limit + 1 : here.offset + 1,
    to: (cursor ? (here.cursors.length - 1) * limit : here.offset) + count,
    total,
    hasPrevious: cursor ? here.cursors.length > 1 : here.offset > 0,
    hasNext: cursor ? Boolean(next) : total !== undefined ? here.offset + count < total : count === limit,
    previous: () =>
      setAt(
        cursor
          ? { ...here, cursors: here.cursors.slice(0, -1) }
          : { ...here, offset: Math.max(0, here.offset - limit) },
      ),
    next: () =>
      setAt(
        cursor
          ? { ...here, cursors: [...here.cursors, String(next)] }
          : { ...here, offset: here.offset + limit },
      ),
  }
  return { ...loaded, page }
}

/**
 * Previous and next, and which rows are shown ("21–40 of 57"); nothing while the list is on one
 * page. The arrows point the way the page reads (mirrored right to left: console-layout.css).
 * @param {{ page: ReturnType<typeof usePaged>['page'], t: (key: string, values?: object) => string, lang: string, label?: string }} props
 */
export function Pager({ page, t, lang, label }) {
  if (!page.hasPrevious && !page.hasNext) return null
  const n = (value) => formatNumber(value, lang)
  const range =
    page.total === undefined
      ? t('list.range', { from: n(page.from), to: n(page.to) })
      : t('list.range_of', { from: n(page.from), to: n(page.to), total: n(page.total) })
  return html`<nav class="pager" aria-label=${label ?? t('list.pages')} data-testid="pager">
    <button type="button" disabled=${!page.hasPrevious} onClick=${page.previous}>
      <span class="back-arrow" aria-hidden="true">←</span> ${t('list.previous')}</button>
    <span class="pager-range" aria-live="polite">${range}</span>
    <button type="button" disabled=${!page.hasNext} onClick=${page.next}>
      ${t('list.next')} <span class="forward-arrow" aria-hidden="true">→</span></button>
  </nav>`
}

/**
 * A filter of a list: a labelled choice among `options` (each `[value, label]`, the first "all"
 * with value ''), changed at once.
 * @param {{ id: string, label: string, value: string, options: Array<[string, string]>, onChange: (value: string) => void }} props
 */
export const Filter = ({ id, label, value, options, onChange }) =>
  html`<p class="filter"><label for=${id}>${label}</label>
    <select id=${id} value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
      ${options.map(([v, text]) => html`<option key=${v} value=${v}>${text}</option>`)}
    </select></p>`

/**
 * A list's filters side by side, above it.
 * @param {{ children: unknown, t: (key: string) => string }} props
 */
export const Filters = ({ children, t }) =>
  html`<form class="filters" role="search" aria-label=${t('list.filters')} onSubmit=${(e) => e.preventDefault()}>${children}</form>`
