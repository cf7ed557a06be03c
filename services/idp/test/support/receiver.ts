import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Delivery {
  headers: IncomingHttpHeaders
  /** The exact bytes received. */
  body: string
}

/**
 * A client's endpoint for what the idp or the ledger sends it (webhooks, SETs): it records each
 * delivery, answers `status`, and refuses the next `failNext(n)` with 503 to make the sender retry.
 */
export async function startReceiver(status = 204) {
  const deliveries: Delivery[] = []
  let failures = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (failures > 0) {
        failures--
        res.writeHead(503).end()
        return
      }
      deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
      res.writeHead(status).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    deliveries,
    failNext(count: number) {
      failures = count
    },
    /** The deliveries so far, once `count` have arrived (20 s at the most). */
    async arrived(count: number) {
      const deadline = Date.now() + 20_000
      while (deliveries.length < count) {
        if (Date.now() > deadline) throw new Error(`${deliveries.length} of ${count} deliveries arrived`)
        await new Promise((r) => setTimeout(r, 100))
      }
      return deliveries
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
