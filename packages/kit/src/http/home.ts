import type { FastifyReply, FastifyRequest } from 'fastify'
import { Html, html } from './html.ts'
import { pageCsp } from './page-headers.ts'
import type { App } from './server.ts'

/** One place a service's root page points to: `rel` names it in the JSON, `title` in the page. */
export interface HomeLink {
  rel: string
  title: string
  href: string
}

/** What a service's root URL says: what it is, and where to go. */
export interface Home {
  service: string
  version: string
  description: string
  links: HomeLink[]
}

/**
 * Whether `Accept` ranks JSON above HTML (RFC 9110 §12.5.1): `application/json` or a `+json` type
 * with a higher weight than `text/html`. No header, or `*∕*` alone, is a person: HTML.
 */
export function prefersJson(accept: unknown): boolean {
  if (typeof accept !== 'string') return false
  let json = 0
  let page = 0
  for (const part of accept.slice(0, 1000).split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';')
    const q = Number(params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v) ?? 1)
    if (type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type))
      json = Math.max(json, q)
    if (type === 'text/html') page = Math.max(page, q)
  }
  return json > 0 && json > page
}

/** The JSON form: links by `rel`, absolute. */
export const homeJson = (home: Home, base: string) => ({
  service: home.service,
  version: home.version,
  description: home.description,
  links: Object.fromEntries(home.links.map((link) => [link.rel, new URL(link.href, `${base}/`).toString()])),
})

const HOME_STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}'
const HOME_CSP = pageCsp({ styles: [HOME_STYLE] })

/** The small page a person sees at a service's root. */
export const homePage = (home: Home) =>
  html`<!doctype html>
    <html lang="en" dir="ltr">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>svc ${home.service}</title>
        <style>${new Html(HOME_STYLE)}</style>
      </head>
      <body>
        <main>
          <h1>svc ${home.service}</h1>
          <p>${home.description}</p>
          <ul>
            ${home.links.map((link) => html`<li><a href="${link.href}" data-rel="${link.rel}">${link.title}</a></li>`)}
          </ul>
          <p><small>version ${home.version}</small></p>
        </main>
      </body>
    </html>`.value

/** Answers a root request: JSON when `Accept` asks for it, else the page (the answer varies by Accept). */
export function sendHome(request: FastifyRequest, reply: FastifyReply, home: Home, base: string) {
  reply.header('vary', 'Accept').header('cache-control', 'no-store')
  if (prefersJson(request.headers.accept)) return reply.send(homeJson(home, base))
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', HOME_CSP)
    .send(homePage(home))
}

/** `GET /`: the service's root page, instead of a 404. */
export function registerHome(app: App, home: Home, base: string) {
  app.get('/', { schema: { hide: true } }, async (request, reply) => sendHome(request, reply, home, base))
}
