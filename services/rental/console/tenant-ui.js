// Pieces the tenant screens share.
import { Empty, ErrorText, html, Loading } from './ui.js'

/** A loaded list: its error in words, loading, its empty state (what to do next), or its rows. */
export function Loaded({ load, rows, t, empty, children }) {
  return html`<${ErrorText} error=${load.error} t=${t} />
    ${
      load.error && !rows
        ? null
        : !rows
          ? html`<${Loading} t=${t} />`
          : rows.length === 0
            ? html`<${Empty}>${empty}<//>`
            : children(rows)
    }`
}

/** A labelled text field. */
export const Field = ({ id, label, value, onInput, type = 'text', required = false, autocomplete }) =>
  html`<p class="field"><label for=${id}>${label}</label>
    <input id=${id} type=${type} value=${value} required=${required} autocomplete=${autocomplete}
      onInput=${(e) => onInput(e.currentTarget.value)} /></p>`
