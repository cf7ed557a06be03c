// @ts-check
// Small pieces every screen uses: loading a resource with its error in words, empty states, amounts.
import { h } from 'preact'
import { useCallback, useEffect, useState } from 'preact/hooks'
import htm from 'htm'
import { api, messageOf, signedOutBy } from './api.js'
import { FieldsInvalid } from './field-check.js'
import { formatDate, formatFils } from './i18n.js'

export const html = htm.bind(h)

/**
 * `{data, error, reload}` of a GET, loaded again when `path` changes; `data` typed by its route.
 * @template {string} P
 * @param {P} path
 */
export function useLoad(path) {
  /** @type {[{ data: import('./api-types').Answer<'GET', P> | null, error: unknown }, (next: any) => void]} */
  const [state, setState] = useState({ data: null, error: null })
  const reload = useCallback(
    () =>
      api('GET', path).then(
        (data) => setState({ data, error: null }),
        (error) => setState((s) => ({ data: s.data, error })),
      ),
    [path],
  )
  useEffect(() => {
    setState({ data: null, error: null })
    void reload()
  }, [reload])
  return { ...state, reload }
}

/**
 * An error in words (api.js's messageOf: the code's sentence), announced to screen readers; nothing
 * for an ended session (app.js says it once, with its "Sign in again" button).
 */
export const ErrorText = ({ error, t }) =>
  error && !signedOutBy(error) ? html`<p class="error" role="alert">${messageOf(error, t)}</p>` : null

/** An empty list: what to do next. */
export const Empty = ({ children }) => html`<p class="empty">${children}</p>`

export const Loading = ({ t }) => html`<p class="loading" aria-live="polite">${t('loading')}</p>`

/** A loaded list's body: loading (nothing when its error says why), the empty state's words, or `table(rows)`. */
export const listBody = (list, rows, t, empty, table) =>
  !rows
    ? list.error
      ? null
      : html`<${Loading} t=${t} />`
    : rows.length === 0
      ? html`<${Empty}>${t(empty)}<//>`
      : table(rows)

/** An amount of `price_fils`, formatted as the kit's money (the routes that give no `display`). */
export const Fils = ({ fils, currency = 'AED', lang }) =>
  html`<bdi class="money">${formatFils(fils, currency, lang)}</bdi>`

export const When = ({ iso, lang }) =>
  iso ? html`<time datetime=${iso}>${formatDate(iso, lang)}</time>` : null

/** A DID, kept left to right in an Arabic page and breakable on a phone. */
export const Did = ({ did }) => html`<code class="did" dir="ltr">${did}</code>`

export const StateBadge = ({ state, t }) =>
  html`<span class=${`state state-${state}`}>${t(`state.${state}`)}</span>`

/** A button that runs `action` once at a time, showing `busy` meanwhile and its error in words. */
export function ActionButton({ label, busy, action, t, kind = '' }) {
  const [running, setRunning] = useState(false)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  const run = async () => {
    setRunning(true)
    setError(null)
    try {
      await action()
    } catch (e) {
      if (!(e instanceof FieldsInvalid)) setError(e)
    } finally {
      setRunning(false)
    }
  }
  return html`<span class="action">
    <button type="button" class=${kind} disabled=${running} onClick=${run}>${running ? busy : label}</button>
    <${ErrorText} error=${error} t=${t} />
  </span>`
}

// the tenant screens: whether the signed-in member's role holds a permission (write controls are
// shown only then; the API refuses anyway)
export const allowed = (me, permission) => me.organization.permissions.includes(permission)
