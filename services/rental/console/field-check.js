// @ts-check
// A form's own checks before it sends: the problem is said at the field (aria-invalid, described
// by its sentence) and the first field in trouble gets the focus; nothing is sent.
import { h } from 'preact'
import { useState } from 'preact/hooks'

/** Thrown by `check` when a field is in trouble: the fields say why, so no error is shown beside the button. */
export class FieldsInvalid extends Error {}

/** An amount in AED: digits with at most two decimals, above zero. */
export const isAmount = (text) => /^\d+(\.\d{1,2})?$/.test(text.trim()) && Number(text) > 0

/**
 * `check({ fieldId: problem or null })` marks the fields whose problem is words (throwing
 * FieldsInvalid), `at(id)` gives a field its ARIA, `note(id)` its sentence.
 */
export function useFieldProblems() {
  const [problems, setProblems] = useState({})
  const check = (rules) => {
    const found = Object.fromEntries(Object.entries(rules).filter(([, problem]) => problem))
    setProblems(found)
    const first = Object.keys(found)[0]
    if (first === undefined) return
    document.getElementById(first)?.focus()
    throw new FieldsInvalid()
  }
  const at = (id) =>
    problems[id]
      ? { 'aria-invalid': 'true', 'aria-describedby': `${id}-problem` }
      : { 'aria-invalid': undefined }
  const note = (id) =>
    problems[id] ? h('p', { class: 'field-problem', id: `${id}-problem` }, problems[id]) : null
  return { check, at, note }
}
