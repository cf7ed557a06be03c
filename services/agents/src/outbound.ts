import { getFromPublicUrl, publicAgent } from '@svc/kit/http/public-fetch'

/** One guarded dispatcher per setting: connections refuse a private (or, always, a metadata) answer. */
const agents = { public: publicAgent({ allowPrivate: false }), private: publicAgent({ allowPrivate: true }) }

/**
 * A request to a URL a message named (a file part, the rental's web or tool-call endpoint), through
 * the kit's outbound guard: https to public addresses, no redirects, bounded in time and size.
 * Private addresses (and http) pass in development and tests (`origins` null) and for an origin the
 * operator listed in AGENTS_FILE_ORIGINS; a cloud metadata address never does. Throws an `Error`
 * naming what went wrong.
 */
export function requestFromMessage(
  url: string,
  origins: string[] | null,
  init: { body?: string; headers?: Record<string, string>; timeoutMs: number; maxBytes: number },
) {
  let origin: string
  try {
    origin = new URL(url).origin
  } catch {
    throw new Error('is not an absolute URL')
  }
  const allowPrivate = origins === null || origins.includes(origin)
  return getFromPublicUrl(url, {
    agent: allowPrivate ? agents.private : agents.public,
    allowPrivate,
    ...init,
  })
}
