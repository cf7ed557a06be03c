/**
 * Extractive summary: sentences scored by the term frequency of their content words, the top N
 * kept in their original order. Pure and deterministic: same text, same summary.
 */

export interface SummaryResult {
  summary: string
  sentence_count: number
  selected: Array<{ index: number; text: string; score: number }>
}

const STOPWORDS = new Set(
  `a about above after again against all also am an and any are as at be because been before being below
  between both but by can could did do does doing down during each few for from further had has have having
  he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor
  not now of off on once only or other our ours ourselves out over own same she should so some such than that
  the their theirs them themselves then there these they this those through to too under until up very was we
  were what when where which while who whom why will with would you your yours yourself yourselves may might
  must shall upon via per its it's one two new`.split(/\s+/),
)

// abbreviations whose full stop does not end a sentence
const ABBREVIATIONS =
  /\b(?:Mr|Mrs|Ms|Dr|Prof|Sr|Jr|St|vs|etc|e\.g|i\.e|Inc|Ltd|Co|No|approx|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.$/i

/** Splits text into sentences: at . ! ? followed by space and a capital, digit or quote, and at blank lines. */
export function splitSentences(text: string): string[] {
  const sentences: string[] = []
  for (const paragraph of text.split(/\n\s*\n/)) {
    const flat = paragraph.replace(/\s+/g, ' ').trim()
    if (!flat) continue
    let start = 0
    const boundary = /[.!?]+["')\]]?\s+(?=["'([]?[\p{Lu}\p{N}])/gu
    for (let m = boundary.exec(flat); m; m = boundary.exec(flat)) {
      const candidate = flat.slice(start, m.index + m[0].trimEnd().length)
      if (ABBREVIATIONS.test(candidate)) continue
      sentences.push(candidate.trim())
      start = m.index + m[0].length
    }
    const rest = flat.slice(start).trim()
    if (rest) sentences.push(rest)
  }
  return sentences
}

/** The content words of a text: lower case letters and digits, stopwords and single letters dropped. */
export function contentWords(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []).filter(
    (w) => w.length > 1 && !STOPWORDS.has(w),
  )
}

const round = (n: number) => Math.round(n * 10_000) / 10_000

export function summarise(text: string, maxSentences = 3): SummaryResult {
  const sentences = splitSentences(text)
  const words = sentences.map(contentWords)
  const frequency = new Map<string, number>()
  for (const w of words.flat()) frequency.set(w, (frequency.get(w) ?? 0) + 1)
  const top = Math.max(1, ...frequency.values())
  // a sentence's score: the mean normalised frequency of its content words, counting at least four
  // words, so a three-word sentence of one frequent term does not outrank the sentences about it
  const scored = sentences.map((sentence, index) => {
    const list = words[index]!
    const sum = list.reduce((acc, w) => acc + frequency.get(w)! / top, 0)
    return { index, text: sentence, score: round(sum / Math.max(4, list.length)) }
  })
  const n = Math.max(1, Math.min(maxSentences, sentences.length))
  // highest score first; ties go to the earlier sentence
  const chosen = [...scored]
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, n)
    .sort((a, b) => a.index - b.index)
  return {
    summary: chosen.map((s) => s.text).join(' '),
    sentence_count: sentences.length,
    selected: chosen,
  }
}
