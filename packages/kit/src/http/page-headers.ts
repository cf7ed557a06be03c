import { createHash } from 'node:crypto'
import type { FastifyInstance } from 'fastify'

/**
 * The security headers of every HTML page of every service, set in one place: an `onSend` hook on
 * answers whose content type is text/html. A page that sets its own Content-Security-Policy keeps
 * it (with `frame-ancestors 'none'` added when it names none); one that sets none gets `PAGE_CSP`.
 * Framing is refused unless the policy names its framers (RFC 9700 §4.16: no clickjacking of the
 * authorization server's pages); `X-Content-Type-Options`, `Referrer-Policy` and `Cache-Control`
 * (no-store: pages carry forms and personal data) are set unless the page set them.
 */

/** A page's policy when it sets none: its own origin only, no inline script or style, never framed. */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

/** The CSP source of an inline `<style>` or `<script>` whose text is exactly `text`. */
export const cspHash = (text: string) =>
  `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`

/** `PAGE_CSP` with inline styles and scripts allowed by their hashes (the page's constant ones). */
export function pageCsp(inline: { styles?: string[]; scripts?: string[] } = {}): string {
  const styles = (inline.styles ?? []).map(cspHash).join(' ')
  const scripts = (inline.scripts ?? []).map(cspHash).join(' ')
  return PAGE_CSP.replace("style-src 'self'", `style-src 'self'${styles ? ` ${styles}` : ''}`).replace(
    "script-src 'self'",
    `script-src 'self'${scripts ? ` ${scripts}` : ''}`,
  )
}

const HTML = /^\s*text\/html\b/i

/** Registers the hook on an app (the kit's server does, for every service). */
export function securePages(app: FastifyInstance) {
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!HTML.test(String(reply.getHeader('content-type') ?? ''))) return payload
    const given = reply.getHeader('content-security-policy')
    let csp = typeof given === 'string' && given.trim() ? given : PAGE_CSP
    if (!/(^|;)\s*frame-ancestors\s/i.test(csp)) csp = `${csp.replace(/;\s*$/, '')}; frame-ancestors 'none'`
    reply.header('content-security-policy', csp)
    if (/(^|;)\s*frame-ancestors\s+'none'/i.test(csp)) reply.header('x-frame-options', 'DENY')
    reply.header('x-content-type-options', 'nosniff')
    // same-origin, not no-referrer: under no-referrer a browser posts a form with `Origin: null`,
    // which the pages' CSRF check refuses; other sites still learn nothing
    if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'same-origin')
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store')
    return payload
  })
}
