/**
 * What the MCP server says to an assistant: money in words ("AED 25.00"), each receipt check by
 * name, and errors as one sentence (an `SvcError` code put into words, never a stack).
 */
import { SvcError } from '@svc/client'
import type { ReceiptVerdict } from '@svc/client'

/** Fils as a person reads an amount: `AED 1,234.50`. */
export function aed(fils: number): string {
  const sign = fils < 0 ? '-' : ''
  const abs = Math.abs(Math.trunc(fils))
  const whole = Math.floor(abs / 100).toLocaleString('en-US')
  return `${sign}AED ${whole}.${String(abs % 100).padStart(2, '0')}`
}

/**
 * An amount of AED as written on a command line (`25`, `25.5`, `25.50`) in fils; undefined
 * when it is not one (negative, more than two decimals, not a number).
 */
export function parseAed(text: string): number | undefined {
  const m = /^\s*(?:AED\s*)?(\d{1,12})(?:\.(\d{1,2}))?\s*$/i.exec(text)
  if (!m) return undefined
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'))
}

/** The checks of a receipt, one line each: `ok   receipt signature: …` or `FAILED leaf hash: …`. */
export function receiptWords(
  taskId: string,
  verdict: Pick<ReceiptVerdict, 'ok' | 'checks'> & { ledger_index: number },
) {
  const head = verdict.ok
    ? `The receipt of task ${taskId} (ledger entry ${verdict.ledger_index}) is verified offline: every check passed.`
    : `The receipt of task ${taskId} (ledger entry ${verdict.ledger_index}) FAILED verification: do not rely on it.`
  return [head, ...verdict.checks.map((c) => `- ${c.ok ? 'ok' : 'FAILED'} ${c.check}: ${c.detail}`)].join(
    '\n',
  )
}

/** What a code means to the person, and what to do next; else the service's own sentence. */
const WORDS: Record<string, string> = {
  unauthenticated: 'The sign-in is no longer accepted: run `svc login`, then start the MCP server again.',
  login_required: 'Not signed in: run `svc login`, then start the MCP server again.',
  invalid_grant:
    'The stored sign-in has expired or was revoked: run `svc login`, then start the server again.',
  forbidden: 'Your role in the organization does not allow this.',
  login_expired: 'The sign-in has expired: run `svc login`, then start the MCP server again.',
  not_signed_in:
    'Not signed in, or the sign-in has ended: run `svc login` in a terminal, then restart the MCP server.',
  passphrase_required:
    'Your signing key is kept encrypted: set SVC_KEY_PASSPHRASE in the MCP server’s environment (the client’s configuration), then restart it.',
  backup_passphrase:
    'SVC_KEY_PASSPHRASE does not open your signing key: correct it in the MCP client’s configuration.',
  passphrase_short: 'SVC_KEY_PASSPHRASE is too short to make a signing key: give it 12 characters or more.',
  credentials_invalid:
    'The stored sign-in is damaged: run `svc login` in a terminal, then restart the MCP server.',
  key_required: 'This needs your signing key, and none is set up: run `svc key show` once to make it.',
  job_not_found: 'There is no job with that id: use search_market to find one.',
  agent_not_found: 'There is no agent with that DID in the market.',
  agent_not_serving: 'That agent does not do that job: choose one of the agents get_job lists.',
  agent_revoked: 'You revoked that agent, so it takes no new task: hire another agent.',
  engagement_not_found: 'There is no engagement with that id: list_engagements shows yours.',
  engagement_not_active: 'That engagement is not active (it was never signed, or it has ended).',
  task_not_found: 'There is no task with that id in your organization.',
  task_not_completed: 'That task did not complete, so it has no receipt.',
  receipt_not_logged: 'The receipt is not on the ledger yet: ask again in a few seconds.',
  nothing_to_release: 'Nothing waits to be paid on that engagement: every completed task is already paid.',
  insufficient_funds: 'The wallet does not hold enough for this: top it up in the console first.',
  budget_exceeded: 'A budget of your organization refuses this amount: nothing was spent.',
  capacity_exceeded: 'The engagement has reached its limit of running tasks: try again shortly.',
  listing_at_capacity: 'The agent is at capacity right now: try again shortly.',
  hash_mismatch: 'The rental handed over a body that is not the one its hash names: it was not signed.',
  step_up_required: 'This needs a recent sign-in: run `svc login` again, then retry.',
  engagement_ended: 'That engagement has ended: hire the agent again for more tasks.',
  listing_unavailable: 'That agent is not available for hire right now.',
  kyb_required: 'Your organization must finish its business check (KYB) in the console before hiring.',
  task_price_over_limit: 'The task’s price is over the engagement’s limit: nothing was spent.',
  escrow_frozen: 'That payment is frozen by an open dispute: it cannot be released now.',
}

/** An error as one sentence for a tool result (never a stack trace). */
export function errorWords(err: unknown): string {
  if (err instanceof SvcError) {
    const known = WORDS[err.code]
    if (known) return known
    if (err.status === 0) return `The service did not answer (${err.message}). Is the stack running?`
    const message = err.message.trim().replace(/\.?$/, '.')
    return `The rental refused this (${err.code}): ${message}`
  }
  if (err instanceof TypeError && /fetch failed/i.test(err.message))
    return 'The service did not answer: check that the rental and the idp are running.'
  const message = err instanceof Error ? err.message : String(err)
  return `Something went wrong: ${message.split('\n')[0]}`
}
