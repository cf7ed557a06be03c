import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import { type AddressInfo, connect } from 'node:net'
import { after, before, describe, it } from 'node:test'
import pino from 'pino'
import { rawRequest } from '../testing/sweep/raw-http.ts'
import { clientErrorHandler } from './client-errors.ts'

/**
 * Node's request timeout cannot be waited for on a service (60 s for the headers, checked every
 * 30 s): a Node server with short ones, answering its client errors with the kit's handler.
 */
describe('client errors Node raises on a connection', () => {
  let server: Server
  let base: string
  before(async () => {
    server = createServer(
      { connectionsCheckingInterval: 50, headersTimeout: 300, requestTimeout: 400 },
      (_q, res) => res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok'),
    )
    server.on('clientError', clientErrorHandler('api', pino({ level: 'silent' })))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  after(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it('answers headers that do not arrive in time with 408 in the error shape, and closes', async () => {
    const answer = await rawRequest(base, 'GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ')
    assert.equal(answer.status, 408)
    assert.equal(answer.headers.connection, 'close')
    assert.ok(answer.closed)
    const body = JSON.parse(answer.body) as { error: { code: string; message: string; request_id: string } }
    assert.equal(body.error.code, 'request_timeout')
    assert.equal(body.error.request_id, answer.headers['x-request-id'])
  })

  it('answers after the response before it on a pipelined connection, never inside it', async () => {
    const received = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(base).port), '127.0.0.1')
      let text = ''
      socket.on('data', (chunk) => (text += chunk.toString()))
      socket.on('close', () => resolve(text))
      socket.write('GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nBad Header: x\r\n\r\n')
    })
    const [first, second] = received.split(/(?=HTTP\/1\.1 )/)
    assert.match(first!, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/)
    assert.match(second!, /^HTTP\/1\.1 400 Bad Request\r\n/)
    assert.match(second!, /"code":"invalid_request","message":"a header is malformed: Invalid header token"/)
  })
})
