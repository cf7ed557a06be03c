import assert from 'node:assert/strict'
import type { lookup as dnsLookup } from 'node:dns'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { guardedFetch } from './guarded-fetch.ts'
import { PublicUrlError } from './public-fetch.ts'

/** A resolver that answers what a test says, as a DNS server under an attacker's control would. */
const fakeDns = (answers: Record<string, string[]>): typeof dnsLookup =>
  ((host: string, options: unknown, callback: (err: Error | null, addresses: unknown) => void) => {
    const cb = typeof options === 'function' ? (options as typeof callback) : callback
    const found = answers[host]
    if (!found) return cb(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), [])
    cb(
      null,
      found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )
  }) as unknown as typeof dnsLookup

const dns = fakeDns({
  'agent.example.com': ['127.0.0.1'],
  'mixed.example.com': ['93.184.215.14', '10.0.0.7'],
  'metadata.example.com': ['169.254.169.254'],
})

describe('kit: the guarded fetch (a fetch for libraries, every URL and redirect checked)', () => {
  let server: Server
  let base = ''
  const hits: string[] = []
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '')
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to')
      req.resume()
      if (to) return void res.writeHead(307, { location: to }).end('moved')
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  const refused = async (call: Promise<unknown>, words: RegExp) =>
    assert.rejects(call, (err: Error) => {
      assert.ok(err instanceof PublicUrlError, `${err.name}: ${err.message}`)
      assert.match(err.message, words)
      return true
    })

  it('private addresses not allowed: a literal and a public-looking name resolving to one are refused, nothing sent', async () => {
    const guard = guardedFetch({ allowPrivate: false, lookup: dns })
    const post = { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }
    try {
      hits.length = 0
      await refused(guard.fetch(`${base}/a2a`, post), /is refused: must be https/)
      await refused(guard.fetch('https://127.0.0.1/a2a', post), /127\.0\.0\.1 is not a public address/)
      await refused(guard.fetch('https://[::ffff:10.0.0.7]/a2a', post), /not a public address/)
      await refused(
        guard.fetch('https://agent.example.com/a2a', post),
        /agent\.example\.com resolves to 127\.0\.0\.1, not a public address/,
      )
      await refused(guard.fetch('https://mixed.example.com/a2a', post), /resolves to 10\.0\.0\.7/)
      await refused(guard.fetch(new URL('https://metadata.example.com/'), post), /cloud metadata/)
      assert.deepEqual(hits, [])
    } finally {
      await guard.close()
    }
  })

  it('private addresses allowed: a local server is reached, a metadata address never (literal, mapped, by name)', async () => {
    const guard = guardedFetch({ allowPrivate: true, lookup: dns })
    try {
      hits.length = 0
      const res = await guard.fetch(`${base}/a2a`, { method: 'POST', body: '{}' })
      assert.equal(res.status, 200)
      assert.deepEqual(await res.json(), { ok: true })
      assert.deepEqual(hits, ['/a2a'])
      hits.length = 0
      await refused(guard.fetch('http://169.254.169.254/latest/meta-data/'), /cloud metadata/)
      await refused(guard.fetch('http://[::ffff:169.254.169.254]/'), /cloud metadata/)
      await refused(guard.fetch('http://metadata.example.com/'), /resolves to 169\.254\.169\.254/)
      // an https name is not resolved at the check: the connection's resolver refuses it
      await refused(guard.fetch('https://metadata.example.com/'), /resolves to 169\.254\.169\.254/)
      await refused(guard.fetch('http://user:pw@127.0.0.1/'), /must not carry credentials/)
      assert.deepEqual(hits, [])
    } finally {
      await guard.close()
    }
  })

  it('redirects: never for a POST; for a GET each Location is checked as the first URL was', async () => {
    const guard = guardedFetch({ allowPrivate: true, lookup: dns, maxRedirects: 2 })
    const to = (url: string) => `${base}/hop?to=${encodeURIComponent(url)}`
    try {
      hits.length = 0
      await refused(
        guard.fetch(to(`${base}/inside`), { method: 'POST', body: '{}' }),
        /answered 307 \(a redirect is not followed\)/,
      )
      await refused(guard.fetch(to('http://169.254.169.254/latest/meta-data/')), /cloud metadata/)
      await refused(guard.fetch(to(`http://metadata.example.com:${new URL(base).port}/inside`)), /169\.254/)
      assert.equal(hits.filter((h) => h.startsWith('/inside')).length, 0)
      const followed = await guard.fetch(to(`${base}/inside`))
      assert.equal(followed.status, 200)
      assert.equal(hits.filter((h) => h === '/inside').length, 1)
      await refused(guard.fetch(to(to(to(`${base}/inside`)))), /redirected more than 2 times/)
    } finally {
      await guard.close()
    }
  })
})
