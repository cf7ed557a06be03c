/**
 * The visual order of a line, for pdfkit (which lays a string out in one direction only): the
 * Unicode bidirectional algorithm (UAX #9) reduced to what invoices hold — Arabic and Latin words,
 * European and Arabic-Indic numbers, punctuation — without explicit embeddings (a value is drawn
 * as an isolate of its own direction by the caller). Its answers are runs, left to right as drawn,
 * each `rtl` (an odd level: shape it and lay its glyphs right to left) or not.
 */
export interface VisualRun {
  text: string
  rtl: boolean
}

type Kind = 'R' | 'L' | 'EN' | 'AN' | 'CS' | 'N'

/** Marks that only steer the algorithm (LRM, RLM, ALM, embeddings, isolates): Intl writes them. */
const CONTROL = /[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]/g
export const ARABIC_LETTER =
  /[\u0600-\u065f\u066d-\u06ef\u06fa-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc]/
const ARABIC_DIGIT = /[\u0660-\u0669\u066b\u066c\u06f0-\u06f9]/

function kindOf(char: string): Kind {
  if (/[0-9]/.test(char)) return 'EN'
  if (ARABIC_DIGIT.test(char)) return 'AN'
  if (ARABIC_LETTER.test(char)) return 'R'
  if (/[.,:/\u00a0]/.test(char)) return 'CS'
  if (/\p{L}/u.test(char)) return 'L'
  return 'N'
}

export type Direction = 'rtl' | 'ltr'

/** The direction of the first strong character (UAX #9, P2–P3), right to left when there is none. */
export function directionOf(text: string): Direction {
  for (const char of text) {
    const kind = kindOf(char)
    if (kind === 'R') return 'rtl'
    if (kind === 'L') return 'ltr'
  }
  return 'rtl'
}

/** The embedding level of each character in a paragraph of direction `base` (0 or 1), up to 2. */
function levels(chars: string[], base: Direction): number[] {
  const kinds = chars.map(kindOf)
  // W4: a separator between two numbers of one kind joins them ("1,234.56", "٦٠٫٠٠")
  for (let i = 1; i < kinds.length - 1; i++)
    if (
      kinds[i] === 'CS' &&
      (kinds[i - 1] === 'EN' || kinds[i - 1] === 'AN') &&
      kinds[i + 1] === kinds[i - 1]
    )
      kinds[i] = kinds[i - 1]!
  // W7: a European number after Latin text (or first in a left-to-right one) is Latin ("INV-2026-000001")
  let strong: Kind = base === 'rtl' ? 'R' : 'L'
  for (let i = 0; i < kinds.length; i++) {
    const k = kinds[i]!
    if (k === 'R' || k === 'L') strong = k
    else if (k === 'EN' && strong === 'L') kinds[i] = 'L'
  }
  // N1/N2: neutrals between two of one direction take it (numbers count as R), else the paragraph's
  const edge = base === 'rtl' ? 'R' : 'L'
  const direction = (k: Kind) => (k === 'L' ? 'L' : k === 'R' || k === 'EN' || k === 'AN' ? 'R' : null)
  for (let i = 0; i < kinds.length;) {
    if (direction(kinds[i]!)) {
      i++
      continue
    }
    let end = i
    while (end < kinds.length && !direction(kinds[end]!)) end++
    const before = i === 0 ? edge : direction(kinds[i - 1]!)
    const after = end === kinds.length ? edge : direction(kinds[end]!)
    const resolved: Kind = before === after ? (before === 'L' ? 'L' : 'R') : edge
    for (let j = i; j < end; j++) kinds[j] = resolved
    i = end
  }
  // I1/I2: Latin goes up to an even level, Arabic to an odd one, numbers to the next even above
  return kinds.map((k) => {
    if (base === 'rtl') return k === 'R' ? 1 : 2
    return k === 'L' ? 0 : k === 'R' ? 1 : 2
  })
}

/**
 * The runs of `line` as drawn from left to right, in a paragraph of direction `base` (L2: from
 * the highest level down to 1, every sequence at that level or above is reversed).
 */
export function visualRuns(line: string, base: Direction = 'rtl'): VisualRun[] {
  const chars = [...line.replace(CONTROL, '')]
  const level = levels(chars, base)
  const runs: Array<VisualRun & { level: number }> = []
  chars.forEach((char, i) => {
    const last = runs.at(-1)
    if (last && last.level === level[i]) last.text += char
    else runs.push({ text: char, level: level[i]!, rtl: level[i]! % 2 === 1 })
  })
  for (let k = Math.max(0, ...runs.map((r) => r.level)); k >= 1; k--)
    for (let i = 0; i < runs.length;) {
      if (runs[i]!.level < k) {
        i++
        continue
      }
      let end = i
      while (end < runs.length && runs[end]!.level >= k) end++
      runs.splice(i, end - i, ...runs.slice(i, end).reverse())
      i = end
    }
  return runs.map(({ text, rtl }) => ({ text, rtl }))
}

/** True when fontkit lays `text` out right to left: its first character of a script is Arabic. */
export const laidOutRtl = (text: string) => {
  for (const char of text) {
    if (ARABIC_LETTER.test(char) || ARABIC_DIGIT.test(char)) return true
    if (/\p{L}/u.test(char)) return false
  }
  return false
}

const MIRRORED: Record<string, string> = {
  '(': ')',
  ')': '(',
  '[': ']',
  ']': '[',
  '«': '»',
  '»': '«',
  '<': '>',
  '>': '<',
}

/**
 * What to give pdfkit for a run so that it lands in the run's direction: fontkit reverses the
 * glyphs of a run whose script is Arabic, so a right-to-left run of neutrals only, or a
 * left-to-right run of Arabic-Indic digits (no joining, nothing to shape), goes in reversed.
 * Brackets in a right-to-left run are mirrored (UAX #9, L4).
 */
export function layoutText(run: VisualRun): string {
  const text = run.rtl ? [...run.text].map((c) => MIRRORED[c] ?? c).join('') : run.text
  return run.rtl === laidOutRtl(text) ? text : [...text].reverse().join('')
}
