import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** The web page the web-tool tests read (HTML: the summariser reduces it to its text). */
export const PAGE =
  '<html><head><style>p{}</style></head><body><p>The harbour opens at dawn.</p><p>Ships unload grain at the harbour every morning.</p><p>Grain prices at the harbour fell this week.</p></body></html>'

export type LocalPages = Awaited<ReturnType<typeof startLocalPages>>

/**
 * A local HTTP server for the web tool and the idp_resource discovery tests (tests allow private
 * addresses): a page, a large one, redirects (one within 127.0.0.1, one escaping to localhost),
 * and tool servers whose RFC 9728 metadata lives on another host, names another resource, or names
 * another idp. `hits`: the paths asked, in order.
 */
export async function startLocalPages(idpUrl: string) {
  const hits: string[] = []
  let port = 0
  const json = (body: unknown) => [200, { 'content-type': 'application/json' }, JSON.stringify(body)] as const
  const routes: Record<string, () => readonly [number, Record<string, string>, string]> = {
    '/page': () => [200, { 'content-type': 'text/html' }, PAGE],
    '/big': () => [200, {}, 'x'.repeat(6000)],
    '/hop': () => [302, { location: '/page' }, ''],
    '/escape': () => [302, { location: `http://localhost:${port}/page` }, ''],
    '/mcp-elsewhere': () => [
      401,
      { 'www-authenticate': `Bearer resource_metadata="http://localhost:${port}/meta-other"` },
      '',
    ],
    '/meta-other': () => json({ resource: 'http://127.0.0.1:1/else', authorization_servers: [idpUrl] }),
    '/mcp-foreign': () => [401, { 'www-authenticate': 'Bearer realm="x"' }, ''],
    '/.well-known/oauth-protected-resource/mcp-foreign': () =>
      json({
        resource: `http://127.0.0.1:${port}/mcp-foreign`,
        authorization_servers: ['https://idp.elsewhere.example'],
      }),
  }
  const server = createServer((req, res) => {
    hits.push(req.url ?? '')
    const [status, headers, body] = routes[req.url ?? '']?.() ?? [404, {}, '']
    res.writeHead(status, headers).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  return {
    hits,
    port,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
