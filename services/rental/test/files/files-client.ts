// A client of the data room in a process of its own (files.test.ts), so that the test process's
// memory is the rental's: `up URL COOKIE CSRF BYTES` streams BYTES random bytes as a
// multipart/form-data file part; `down URL COOKIE` downloads and hashes. Prints one JSON line.
import { createHash, randomBytes } from 'node:crypto'

const [mode = '', url = '', cookie = '', csrf = '', total = '0'] = process.argv.slice(2)
const hash = createHash('sha256')
if (mode === 'up') {
  const boundary = `----svc${randomBytes(8).toString('hex')}`
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
  let sent = -1
  const body = new ReadableStream({
    pull(controller) {
      if (sent < 0) {
        sent = 0
        return controller.enqueue(Buffer.from(head))
      }
      if (sent >= Number(total)) {
        controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`))
        return controller.close()
      }
      const piece = randomBytes(Math.min(65536, Number(total) - sent))
      hash.update(piece)
      sent += piece.length
      controller.enqueue(piece)
    },
  })
  const res = await fetch(url, {
    method: 'POST',
    body,
    duplex: 'half',
    headers: { cookie, 'x-csrf-token': csrf, 'content-type': `multipart/form-data; boundary=${boundary}` },
  })
  console.log(JSON.stringify({ status: res.status, body: await res.text(), sha256: hash.digest('hex') }))
} else {
  const res = await fetch(url, { headers: { cookie } })
  let size = 0
  for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(piece)
    size += piece.length
  }
  console.log(
    JSON.stringify({
      status: res.status,
      size,
      sha256: hash.digest('hex'),
      length: res.headers.get('content-length'),
    }),
  )
}
