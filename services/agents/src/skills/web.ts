import { requestFromMessage } from '../outbound.ts'

/** An answer's JSON object, or an empty one. */
export function jsonOf(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/**
 * The web tool of a built-in agent: a page fetched by the rental for the agent's task (the rental
 * enforces the client's web and egress policies and receipts the fetch). The URL to ask and the
 * task's credential come in the message metadata (`svc_web_url`, `svc_connect_token`).
 */
const WEB_PATH = '/api/web/fetch'
const TIMEOUT_MS = 20_000
const MAX_ANSWER_BYTES = 8 * 1024 * 1024

export interface FetchedPage {
  status: number
  state: string | null
  text: string | null
  final_url: string | null
  content_sha256: string | null
  receipt: { id: string; leaf_hash: string | null } | null
  error: string | null
}

/** The rental's web-fetch URL from the metadata, if it is one (no other URL is ever called). */
export function webToolOf(options: Record<string, unknown>): { url: string; token: string } | undefined {
  const url = options.svc_web_url
  const token = options.svc_connect_token
  if (typeof url !== 'string' || typeof token !== 'string') return undefined
  try {
    const parsed = new URL(url)
    return /^https?:$/.test(parsed.protocol) && parsed.pathname === WEB_PATH && !parsed.search
      ? { url: parsed.href, token }
      : undefined
  } catch {
    return undefined
  }
}

/** A message whose whole text is one http(s) URL: the page to read. */
export const onlyUrl = (text: string) => (/^https?:\/\/\S+$/.test(text.trim()) ? text.trim() : undefined)

export async function fetchPage(
  tool: { url: string; token: string },
  pageUrl: string,
  origins: string[] | null,
): Promise<FetchedPage> {
  try {
    const res = await requestFromMessage(tool.url, origins, {
      headers: { authorization: `Bearer ${tool.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: pageUrl }),
      timeoutMs: TIMEOUT_MS,
      maxBytes: MAX_ANSWER_BYTES,
    })
    const body = jsonOf(res.text)
    const error = (body.error as { message?: string } | undefined)?.message ?? (body.error as string | null)
    return {
      status: res.status,
      state: typeof body.state === 'string' ? body.state : null,
      text: typeof body.text === 'string' ? body.text : null,
      final_url: typeof body.final_url === 'string' ? body.final_url : null,
      content_sha256: typeof body.content_sha256 === 'string' ? body.content_sha256 : null,
      receipt: (body.receipt as FetchedPage['receipt']) ?? null,
      error: typeof error === 'string' ? error : null,
    }
  } catch (err) {
    const none = { state: null, text: null, final_url: null, content_sha256: null, receipt: null }
    return { status: 0, ...none, error: (err as Error).message }
  }
}

/** A page's readable text: an HTML page's scripts, styles and tags dropped, entities of the common kind decoded. */
export function pageText(text: string): string {
  if (!/<\/?[a-z][\s\S]*>/i.test(text)) return text
  return text
    .replace(/<(script|style|noscript)[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<\/(p|div|h[1-6]|li|tr|section|article|br)>|<br\s*\/?>/gi, '\n\n')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n\s*/g, '\n\n')
    .trim()
}
