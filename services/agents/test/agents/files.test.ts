import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import type { Part } from '@a2a-js/sdk'
import { type FileRules, readFiles } from '../../src/areas/agents/files.ts'

const TEXT = 'A file the agent reads. It has two sentences.'
const sha = (bytes: string | Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`

describe('the built-in agents read file parts by URL: bounded, from allowed origins, checked against their hash', () => {
  let web: Server
  let base = ''
  before(async () => {
    web = createServer((req, res) => {
      if (req.url === '/text') res.writeHead(200, { 'content-type': 'text/plain' }).end(TEXT)
      else if (req.url === '/big') res.writeHead(200).end('x'.repeat(2000))
      else if (req.url === '/latin1') res.writeHead(200).end(Buffer.from([0x63, 0x61, 0x66, 0xe9]))
      else if (req.url === '/moved') res.writeHead(302, { location: '/text' }).end()
      else res.writeHead(404).end()
    })
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`
  })
  after(() => web.close())

  const part = (path: string, metadata?: Record<string, unknown>): Part => ({
    content: { $case: 'url', value: `${base}${path}` },
    metadata,
    filename: `${path.slice(1)}.txt`,
    mediaType: 'text/plain',
  })
  const rules: FileRules = { maxBytes: 1000, origins: null }

  it('reads the text and its hash; text parts are not files', async () => {
    const text: Part = {
      content: { $case: 'text', value: 'hi' },
      metadata: undefined,
      filename: '',
      mediaType: 'text/plain',
    }
    const [read, ...rest] = await readFiles([text, part('/text', { svc_sha256: sha(TEXT) })], rules)
    assert.equal(rest.length, 0)
    assert.deepEqual(read, {
      filename: 'text.txt',
      media_type: 'text/plain',
      sha256: sha(TEXT),
      size_bytes: Buffer.byteLength(TEXT),
      text: TEXT,
    })
  })

  it('refuses a hash mismatch, a file past the limit, non-UTF-8 bytes, a redirect, a 404 and another origin', async () => {
    const refused = async (parts: Part[], pattern: RegExp, r = rules) =>
      assert.rejects(readFiles(parts, r), pattern)
    await refused([part('/text', { svc_sha256: sha('other') })], /hash/)
    await refused([part('/big')], /larger than the 1000 bytes/)
    await refused([part('/latin1')], /not UTF-8/)
    await refused([part('/moved')], /could not be fetched/)
    await refused([part('/nope')], /answered 404/)
    await refused([part('/text')], /allowed origin/, { maxBytes: 1000, origins: ['https://rental.example'] })
    const ftp: Part = { ...part('/text'), content: { $case: 'url', value: 'ftp://127.0.0.1/x' } }
    await refused([ftp], /not http/)
    assert.equal((await readFiles([part('/text')], { maxBytes: 1000, origins: [base] })).length, 1)
  })
})
