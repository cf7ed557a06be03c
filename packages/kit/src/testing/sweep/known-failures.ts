import type { Failure } from './bad-input.ts'

/**
 * Failures the sweeps find today, each caused by a bug that issue 16 names and another change fixes.
 * The sweeps stay strict: a failure not listed here fails the suite. Remove an entry when its fix
 * is merged (the sweep then prints the entries that no longer match anything).
 */
export const KNOWN_FAILURES: Array<{
  service: string
  /** `METHOD /path/{…}` as the failure names it. */
  op: string
  problem: Failure['problem']
  finding: number
  note: string
}> = []

export function partition(failures: Failure[]) {
  const known = failures.filter((f) => KNOWN_FAILURES.some((k) => matches(k, f)))
  const unknown = failures.filter((f) => !known.includes(f))
  return { known, unknown }
}

function matches(entry: (typeof KNOWN_FAILURES)[number], failure: Failure) {
  return entry.service === failure.service && entry.op === failure.op && entry.problem === failure.problem
}

/** The listed failures of a service that the sweep did not meet (fixed: the entry can go). */
export function staleEntries(service: string, problems: Array<Failure['problem']>, failures: Failure[]) {
  return KNOWN_FAILURES.filter(
    (k) => k.service === service && problems.includes(k.problem) && !failures.some((f) => matches(k, f)),
  )
}

/** A failure as a report line: the request that reproduces it and what came back. */
export const describeFailure = (f: Failure) =>
  `${f.service} ${f.op}: ${f.problem} (${f.status})\n    request: ${f.request}\n    answer: ${f.body}`

/** Fails with every unknown failure; prints the known ones and the stale entries. */
export function assertNoUnknownFailures(
  service: string,
  problems: Array<Failure['problem']>,
  failures: Failure[],
  log: (line: string) => void,
) {
  const { known, unknown } = partition(failures)
  for (const f of known) log(`known (issue 16): ${describeFailure(f)}`)
  for (const k of staleEntries(service, problems, failures))
    log(
      `KNOWN_FAILURES entry no longer met, remove it: ${k.service} ${k.op} ${k.problem} (finding ${k.finding})`,
    )
  if (unknown.length > 0)
    throw new Error(`${unknown.length} failures:\n${unknown.map(describeFailure).join('\n')}`)
}

export const BAD_INPUT_PROBLEMS: Array<Failure['problem']> = [
  'server error',
  'error shape',
  '400 before 401',
  'served without credential',
]
