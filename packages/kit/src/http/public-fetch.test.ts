import assert from 'node:assert/strict'
import type { lookup as dnsLookup } from 'node:dns'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import {
  checkPublicUrl,
  getFromPublicUrl,
  isPrivateAddress,
  postToPublicUrl,
  PublicUrlError,
  pinnedAgent,
  publicAgent,
  resolvePublic,
} from './public-fetch.ts'

/** A resolver that answers what a test says, as a DNS server under an attacker's control would. */
const fakeDns = (answers: Record<string, string[]>): typeof dnsLookup =>
  ((host: string, _options: unknown, callback: (err: Error | null, addresses: unknown) => void) => {
    const found = answers[host]
    if (!found) return callback(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' }), [])
    callback(
      null,
      found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    )
  }) as unknown as typeof dnsLookup

describe('kit: public-address fetch (client-named URLs)', () => {
  let server: Server
  let port = 0
  const hits: string[] = []
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '')
      if (req.url === '/redirect') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/target` }).end()
        return
      }
      if (req.url === '/loop') {
        res.writeHead(302, { location: '/loop' }).end()
        return
      }
      if (req.url === '/big') {
        res.writeHead(200).end('x'.repeat(2000))
        return
      }
      req.resume()
      req.on('end', () => res.writeHead(204).end())
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('knows loopback, private, link-local, mapped and public addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a01:203',
      '[::1]',
      '64:ff9b::10.0.0.1',
    ])
      assert.equal(isPrivateAddress(address), true, address)
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      assert.equal(isPrivateAddress(address), false, address)
  })

  it('refuses at the check: loopback, 10/8, ::1, IPv4-mapped IPv6, a name resolving to 127.0.0.1, http', async () => {
    const lookup = fakeDns({ 'rebind.example': ['127.0.0.1'], 'mixed.example': ['8.8.8.8', '10.0.0.7'] })
    for (const url of [
      'https://127.0.0.1/hook',
      'https://10.2.3.4/hook',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:7f00:1]:8443/hook',
      'https://2130706433/hook',
      'https://rebind.example/hook',
      'https://mixed.example/hook',
      'https://nowhere.example/hook',
      'http://8.8.8.8/hook',
      'https://user:pw@8.8.8.8/hook',
      'not a url',
    ])
      await assert.rejects(checkPublicUrl(url, { allowPrivate: false, lookup }), PublicUrlError, url)
    const ok = await checkPublicUrl('https://8.8.8.8/hook', { allowPrivate: false, lookup })
    assert.equal(ok.hostname, '8.8.8.8')
    const named = fakeDns({ 'public.example': ['93.184.215.14'] })
    assert.equal(
      (await checkPublicUrl('https://public.example/x', { allowPrivate: false, lookup: named })).host,
      'public.example',
    )
    // development and tests: local receivers, plain http
    assert.ok(await checkPublicUrl(`http://127.0.0.1:${port}/`, { allowPrivate: true }))
  })

  it('refuses at connect time a name that now resolves to a private address (DNS rebinding)', async () => {
    // the check passed when the URL was given; the name now answers 127.0.0.1, where our server listens
    let answer = '93.184.215.14'
    const lookup = ((host: string, options: unknown, callback: never) =>
      fakeDns({ 'rebind.example': [answer] })(
        host,
        options as never,
        callback,
      )) as unknown as typeof dnsLookup
    await checkPublicUrl('https://rebind.example/hook', { allowPrivate: false, lookup })
    answer = '127.0.0.1'
    const agent = publicAgent({ allowPrivate: false, lookup })
    const before = hits.length
    // plain http, to reach the local test server: only the agent's resolver stands in the way
    const outcome = await postToPublicUrl(`http://rebind.example:${port}/hook`, {
      body: '{}',
      headers: { 'content-type': 'application/json' },
      agent,
      allowPrivate: true,
    })
    assert.equal(outcome.status, null)
    assert.match(outcome.error ?? '', /127\.0\.0\.1, not a public address/)
    // a real name, localhost, resolving to loopback, refused as well
    const local = await postToPublicUrl(`http://localhost:${port}/hook`, {
      body: '{}',
      headers: {},
      agent: publicAgent({ allowPrivate: false }),
      allowPrivate: true,
    })
    assert.equal(local.status, null)
    assert.match(local.error ?? '', /not a public address/)
    assert.equal(hits.length, before, 'nothing reached the local server')
    await agent.close()
  })

  it('refuses a literal private address and http at send time when private addresses are not allowed', async () => {
    const agent = publicAgent({ allowPrivate: false })
    const outcome = await postToPublicUrl(`https://127.0.0.1:${port}/hook`, {
      body: '{}',
      headers: {},
      agent,
      allowPrivate: false,
    })
    assert.equal(outcome.status, null)
    assert.match(outcome.error ?? '', /not a public address/)
    await agent.close()
  })

  it('does not follow a redirect: the 3xx is the outcome, the target never hit', async () => {
    const agent = publicAgent({ allowPrivate: true })
    const outcome = await postToPublicUrl(`http://127.0.0.1:${port}/redirect`, {
      body: '{"a":1}',
      headers: { 'content-type': 'application/json' },
      agent,
      allowPrivate: true,
    })
    assert.equal(outcome.status, 302)
    assert.match(outcome.error ?? '', /302 \(redirects are not followed\)/)
    assert.ok(!hits.includes('/target'))
    const ok = await postToPublicUrl(`http://127.0.0.1:${port}/ok`, {
      body: '{}',
      headers: {},
      agent,
      allowPrivate: true,
    })
    assert.deepEqual([ok.status, ok.error], [204, null])
    assert.ok(ok.durationMs >= 0)
    await agent.close()
  })

  it('GET: follows at most maxRedirects redirects, each target checked; bounded in size', async () => {
    const agent = publicAgent({ allowPrivate: true })
    const none = await getFromPublicUrl(`http://127.0.0.1:${port}/redirect`, { agent, allowPrivate: true })
    assert.equal(none.status, 302, 'no redirects unless asked')
    const followed = await getFromPublicUrl(`http://127.0.0.1:${port}/redirect`, {
      agent,
      allowPrivate: true,
      maxRedirects: 2,
    })
    assert.deepEqual([followed.status, followed.url], [204, `http://127.0.0.1:${port}/target`])
    await assert.rejects(
      getFromPublicUrl(`http://127.0.0.1:${port}/loop`, { agent, allowPrivate: true, maxRedirects: 3 }),
      /redirected more than 3 times/,
    )
    await assert.rejects(
      getFromPublicUrl(`http://127.0.0.1:${port}/big`, { agent, allowPrivate: true, maxBytes: 1000 }),
      /more than 1000 bytes/,
    )
    await agent.close()
  })

  it('pins a connection to the addresses checked: a later DNS answer is never asked', async () => {
    let answer = '93.184.215.14'
    const lookup = ((host: string, options: unknown, callback: never) =>
      fakeDns({ 'pinned.example': [answer] })(
        host,
        options as never,
        callback,
      )) as unknown as typeof dnsLookup
    const checked = await resolvePublic(`https://pinned.example:${port}/`, { allowPrivate: false, lookup })
    assert.deepEqual(checked, [{ address: '93.184.215.14', family: 4 }])
    await assert.rejects(
      resolvePublic('https://pinned.example/', {
        allowPrivate: false,
        lookup: fakeDns({ 'pinned.example': ['127.0.0.1'] }),
      }),
      /resolves to 127\.0\.0\.1, not a public address/,
    )
    assert.equal(await resolvePublic('https://93.184.215.14/', { allowPrivate: false }), null)
    // the name no DNS knows reaches the address it was pinned to (here our local server) and only it
    answer = '10.0.0.1'
    const agent = pinnedAgent('pinned.example', [{ address: '127.0.0.1', family: 4 }])
    const before = hits.length
    const ok = await postToPublicUrl(`http://pinned.example:${port}/pinned`, {
      body: '{}',
      headers: {},
      agent,
      allowPrivate: true,
    })
    assert.deepEqual([ok.status, ok.error], [204, null])
    assert.equal(hits.length, before + 1)
    const other = await postToPublicUrl(`http://other.example:${port}/pinned`, {
      body: '{}',
      headers: {},
      agent,
      allowPrivate: true,
    })
    assert.equal(other.status, null)
    assert.match(other.error ?? '', /not the pinned host/)
    await agent.close()
  })
})
