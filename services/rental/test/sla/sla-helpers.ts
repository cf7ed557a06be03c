import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { eventually } from '../support/stack.ts'

/** A webhook receiver verifying every call with the `standardwebhooks` package. */
export class Receiver {
  secret = ''
  readonly received: Array<{ type: string; data: { details: Record<string, unknown> } }> = []
  #server: Server | undefined
  url = ''
  async start() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const headers = Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h])]),
        )
        try {
          const body = Buffer.concat(chunks).toString('utf8')
          this.received.push(new Webhook(this.secret).verify(body, headers) as Receiver['received'][number])
          res.writeHead(204).end()
        } catch {
          res.writeHead(401).end()
        }
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/sla`
  }
  close() {
    return new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve())
  }
}

/** The check's first defined answer, polled until the 20 s deadline. */
export async function until<T>(what: string, check: () => Promise<T | undefined | false>): Promise<T> {
  let value: T | undefined | false
  await eventually(what, async () => Boolean((value = await check())))
  return value as T
}
