import { requestFromMessage } from '../outbound.ts'
import { jsonOf } from './web.ts'

/**
 * The note-taker's skill: it files the text as a note in the client's notes tool server, through
 * the rental (the only way it reaches a tool): it lists the newest notes (a read-only call), then
 * asks to create one (a write the client's policy may hold for approval). The rental's URL and the
 * task's credential come in the message metadata (`svc_connect_url`, `svc_connect_token`).
 */
export interface ToolCallOutcome {
  tool: string
  status: number
  action_id: string | null
  state: string | null
  approval_id: string | null
  error: string | null
  result: unknown
  /** Held, then waited for: the state is its outcome read later. */
  waited?: boolean
}

const CALLS_PATH = '/api/connect/calls'
const TIMEOUT_MS = 20_000
const MAX_ANSWER_BYTES = 1024 * 1024

/** The rental's tool-call URL from the metadata, if it is one (no other URL is ever called). */
export function callsUrl(options: Record<string, unknown>): string | undefined {
  const url = options.svc_connect_url
  if (typeof url !== 'string') return undefined
  try {
    const parsed = new URL(url)
    return /^https?:$/.test(parsed.protocol) && parsed.pathname === CALLS_PATH && !parsed.search
      ? parsed.href
      : undefined
  } catch {
    return undefined
  }
}

export async function callTool(
  url: string,
  token: string,
  tool: string,
  args: Record<string, unknown>,
  origins: string[] | null,
): Promise<ToolCallOutcome> {
  try {
    const res = await requestFromMessage(url, origins, {
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tool, arguments: args }),
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_ANSWER_BYTES,
    })
    const body = jsonOf(res.text)
    const error = body.error as { message?: string } | undefined
    return {
      tool,
      status: res.status,
      action_id: typeof body.id === 'string' ? body.id : null,
      state: typeof body.state === 'string' ? body.state : null,
      approval_id: typeof body.approval_id === 'string' ? body.approval_id : null,
      error: error?.message ?? null,
      result: body.result ?? null,
    }
  } catch (err) {
    return {
      tool,
      status: 0,
      action_id: null,
      state: null,
      approval_id: null,
      error: (err as Error).message,
      result: null,
    }
  }
}

const ENDED = new Set(['completed', 'failed', 'timed_out', 'refused', 'rejected', 'canceled'])

/**
 * A held call's outcome, read at GET {calls URL}/{action id} with backoff (0.25 s doubling up to
 * 4 s) until it ended, the credential ended with the task (401), or `waitMs` passed.
 */
export async function awaitOutcome(
  url: string,
  token: string,
  held: ToolCallOutcome,
  waitMs: number,
  origins: string[] | null,
  sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<ToolCallOutcome> {
  if (!held.action_id || held.status !== 202 || waitMs <= 0) return held
  const deadline = Date.now() + waitMs
  let pause = 250
  let last = held
  while (Date.now() + pause <= deadline) {
    await sleep(pause)
    pause = Math.min(pause * 2, 4000)
    try {
      const res = await requestFromMessage(`${url}/${encodeURIComponent(held.action_id)}`, origins, {
        headers: { authorization: `Bearer ${token}` },
        timeoutMs: TIMEOUT_MS,
        maxBytes: MAX_ANSWER_BYTES,
      })
      if (res.status === 401 || res.status === 404) return last
      const body = jsonOf(res.text)
      if (res.status !== 200 || typeof body.state !== 'string') continue
      last = { ...last, state: body.state, result: body.result ?? null }
      if (ENDED.has(body.state)) return { ...last, waited: true }
    } catch {
      // the rental did not answer this time: asked again after the pause
    }
  }
  return last
}

/** `origins`: AGENTS_FILE_ORIGINS, where private addresses may be reached (null: anywhere, development). */
export async function fileNote(
  text: string,
  options: Record<string, unknown>,
  origins: string[] | null,
  waitMs = 0,
) {
  const url = callsUrl(options)
  const token = options.svc_connect_token
  if (!url || typeof token !== 'string')
    return { connected: false, calls: [] as ToolCallOutcome[], title: null as string | null }
  const title = (text.split('\n').find((l) => l.trim()) ?? 'Note').trim().slice(0, 200)
  const listed = await callTool(url, token, 'notes.list', { limit: 5 }, origins)
  const asked = await callTool(url, token, 'notes.create', { title, body: text.slice(0, 10_000) }, origins)
  const created = await awaitOutcome(url, token, asked, waitMs, origins)
  return { connected: true, calls: [listed, created], title }
}

export const describeCall = (c: ToolCallOutcome) =>
  c.error
    ? `${c.tool}: refused or failed (${c.status}): ${c.error}`
    : c.state === 'pending_approval'
      ? `${c.tool}: waiting for the client's approval (action ${c.action_id})`
      : `${c.tool}: ${c.state}${c.waited ? ' after the client’s decision' : ''} (action ${c.action_id})`
