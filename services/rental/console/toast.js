// @ts-check
// The console's confirmation after an action: `say(text, undo?)` from any screen shows a short
// message in one live region (role=status, read by screen readers without moving the focus),
// with an Undo button where the API has the action's inverse. A message stays 8 s (12 s with an undo).
import { useEffect, useState } from 'preact/hooks'
import { messageOf, signedOutBy } from './api.js'
import { html } from './ui.js'

/** @typedef {{ id: number, text: string, undo?: () => Promise<unknown>, undone?: boolean }} Toast */

/** @type {Set<(toasts: Toast[]) => void>} */
const listeners = new Set()
/** @type {Toast[]} */
let shown = []
let next = 1

const publish = () => listeners.forEach((listen) => listen(shown))
const dismiss = (/** @type {number} */ id) => {
  shown = shown.filter((x) => x.id !== id)
  publish()
}

/**
 * Confirms an action in words; `undo` (optional) reverses it through the API.
 * @param {string} text
 * @param {() => Promise<unknown>} [undo]
 */
export function say(text, undo) {
  const toast = { id: next++, text, ...(undo ? { undo } : {}) }
  shown = [...shown.slice(-2), toast]
  publish()
  globalThis.setTimeout(() => dismiss(toast.id), undo ? 12_000 : 8_000)
}

/** The region the messages appear in: rendered once by app.js. */
export function Toasts({ t }) {
  const [toasts, setToasts] = useState(shown)
  const [error, setError] = useState(/** @type {unknown} */ (null))
  useEffect(() => {
    listeners.add(setToasts)
    return () => void listeners.delete(setToasts)
  }, [])
  const undo = async (/** @type {Toast} */ toast) => {
    setError(null)
    try {
      await toast.undo?.()
      dismiss(toast.id)
      say(t('toast.undone'))
    } catch (e) {
      setError(e)
    }
  }
  return html`<div class="toasts" role="status" aria-live="polite" data-testid="toasts">
    ${toasts.map(
      (toast) => html`<p class="toast" key=${toast.id}>
        <span>${toast.text}</span>
        ${toast.undo ? html`<button type="button" class="link" onClick=${() => undo(toast)}>${t('toast.undo')}</button>` : null}
        <button type="button" class="link" aria-label=${t('toast.close')} onClick=${() => dismiss(toast.id)}>×</button>
      </p>`,
    )}
    ${error && !signedOutBy(error) ? html`<p class="toast error">${messageOf(error, t)}</p>` : null}
  </div>`
}
