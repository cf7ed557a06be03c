/**
 * What a person signs, in one sentence: the web console's own summary (services/rental/console/
 * names.js `summaryOf`, with its English words), so the terminal and the console say the same thing
 * about an SLA, an escrow or a release. Loaded on first use (the console's modules are plain JS).
 */
export interface SignedBody {
  body: Record<string, unknown>
  hash: string
}

export interface Names {
  job_title?: string | null
  agent_name?: string | null
  provider_name?: string | null
}

type Translate = (key: string, values?: Record<string, unknown>) => string
interface ConsoleWords {
  summaryOf(body: unknown, names: Names, t: Translate, lang: 'en'): string | null
  translator(lang: 'en'): Translate
}

let loaded: Promise<ConsoleWords> | undefined
function consoleWords(): Promise<ConsoleWords> {
  const at = (file: string) => new URL(`../../../services/rental/console/${file}`, import.meta.url).href
  loaded ??= Promise.all([import(at('names.js')), import(at('i18n.js'))]).then(
    ([names, i18n]) =>
      ({
        summaryOf: (names as ConsoleWords).summaryOf,
        translator: (i18n as ConsoleWords).translator,
      }) as ConsoleWords,
  )
  return loaded
}

/** The sentence the console shows above a body to sign (a plain space for the no-break ones). */
export async function summary(signed: SignedBody, names: Names): Promise<string> {
  const words = await consoleWords()
  const sentence = words.summaryOf(signed.body, names, words.translator('en'), 'en')
  return (sentence ?? `a ${String(signed.body.type ?? 'body')} to sign`).replace(/[\u00a0\u202f]/g, ' ')
}
