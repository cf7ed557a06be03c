import { connect } from 'node:net'

export interface RawAnswer {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
  /** The server closed the connection after its answer. */
  closed: boolean
}

/**
 * Sends bytes as they are on a new connection (no client library to correct them) and reads one
 * answer. When the answer says `connection: close`, waits for the server to close the connection.
 */
export function rawRequest(baseUrl: string, bytes: string | Buffer, timeoutMs = 10_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let received = Buffer.alloc(0)
    let answer: RawAnswer | undefined
    const timer = setTimeout(() => finish(new Error(`no whole answer within ${timeoutMs} ms`)), timeoutMs)
    const finish = (err?: Error) => {
      clearTimeout(timer)
      socket.destroy()
      if (answer) resolve(answer)
      else reject(err ?? new Error(`the connection closed before a whole answer: ${received.toString()}`))
    }
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      answer ??= parseAnswer(received)
      if (answer && answer.headers.connection?.toLowerCase() !== 'close') finish()
    })
    socket.on('close', () => {
      if (answer) answer.closed = true
      finish()
    })
    // the server may stop reading what it refused: what it answered is still read above
    socket.on('error', () => {})
    socket.write(typeof bytes === 'string' ? Buffer.from(bytes, 'latin1') : bytes)
  })
}

function parseAnswer(received: Buffer): RawAnswer | undefined {
  const end = received.indexOf('\r\n\r\n')
  if (end < 0) return undefined
  const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine!)?.[1])
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const body = received.subarray(end + 4)
  if (headers['transfer-encoding']) {
    const text = dechunk(body)
    return text === undefined ? undefined : { status, headers, body: text, closed: false }
  }
  const length = Number(headers['content-length'] ?? 0)
  if (body.length < length) return undefined
  return { status, headers, body: body.subarray(0, length).toString('utf8'), closed: false }
}

/** A chunked body once its last chunk arrived (extensions and trailers ignored). */
function dechunk(body: Buffer): string | undefined {
  const parts: Buffer[] = []
  for (let at = 0; ;) {
    const lineEnd = body.indexOf('\r\n', at)
    if (lineEnd < 0) return undefined
    const size = parseInt(body.subarray(at, lineEnd).toString('latin1'), 16)
    if (size === 0) return body.indexOf('\r\n\r\n', lineEnd) < 0 ? undefined : Buffer.concat(parts).toString()
    if (body.length < lineEnd + 2 + size + 2) return undefined
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}
