import { type AddressInfo, createServer, type Server, Socket } from 'node:net'

export type ProxyMode = 'pass' | 'refuse' | 'blackhole'

/**
 * A TCP proxy between a service and a dependency (PostgreSQL, Redis, the ledger) that a fault test
 * switches between passing traffic, refusing it (every open connection is cut and new ones are
 * closed at once) and black-holing it (connections are accepted and nothing is answered, as a
 * silent server or a dead network would do). Back to `pass`, black-holed connections are cut, so
 * clients reconnect as they would after a real partition.
 */
export class FaultProxy {
  mode: ProxyMode = 'pass'
  readonly #server: Server
  readonly #pairs = new Set<{ client: Socket; upstream: Socket | undefined }>()

  private constructor(server: Server) {
    this.#server = server
  }

  static async start(target: { host: string; port: number }): Promise<FaultProxy> {
    const server = createServer()
    const proxy = new FaultProxy(server)
    server.on('connection', (client) => proxy.#accept(client, target))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return proxy
  }

  /** The proxy's port; a URL of the dependency with its host and port replaced by it. */
  get port(): number {
    return (this.#server.address() as AddressInfo).port
  }

  url(original: string): string {
    const url = new URL(original)
    url.hostname = '127.0.0.1'
    url.port = String(this.port)
    return url.toString()
  }

  #accept(client: Socket, target: { host: string; port: number }) {
    client.on('error', () => {})
    if (this.mode === 'refuse') return void client.destroy()
    const pair: { client: Socket; upstream: Socket | undefined } = { client, upstream: undefined }
    this.#pairs.add(pair)
    client.on('close', () => {
      this.#pairs.delete(pair)
      pair.upstream?.destroy()
    })
    if (this.mode === 'blackhole') return // accepted, never answered, nothing forwarded
    const upstream = new Socket()
    pair.upstream = upstream
    upstream.on('error', () => client.destroy())
    upstream.on('close', () => client.destroy())
    upstream.connect(target.port, target.host)
    // bytes are forwarded only while passing: a black hole swallows them both ways
    client.on('data', (chunk) => this.mode === 'pass' && upstream.write(chunk))
    upstream.on('data', (chunk) => this.mode === 'pass' && client.write(chunk))
  }

  set(mode: ProxyMode): void {
    const from = this.mode
    this.mode = mode
    if (mode === 'refuse' || (mode === 'pass' && from === 'blackhole'))
      for (const { client, upstream } of this.#pairs) {
        client.destroy()
        upstream?.destroy()
      }
  }

  async close(): Promise<void> {
    this.set('refuse')
    await new Promise((resolve) => this.#server.close(resolve))
  }
}

/** Host and port of a postgres:// or redis:// URL. */
export function endpointOf(url: string): { host: string; port: number } {
  const parsed = new URL(url)
  return {
    host: parsed.hostname,
    port: Number(parsed.port || (parsed.protocol.startsWith('redis') ? 6379 : 5432)),
  }
}
