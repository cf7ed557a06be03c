// @ts-check
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

/** A labelled text field; with `fields` (field-check.js), its problem said under it. */
export const Field = ({ id, label, value, onInput, type = 'text', required = false, autocomplete, fields }) =>
  html`<p class="field"><label for=${id}>${label}</label>
    <input id=${id} type=${type} value=${value} required=${required} autocomplete=${autocomplete}
      ...${fields?.at(id) ?? {}} onInput=${(e) => onInput(e.currentTarget.value)} />${fields?.note(id)}</p>`
