/**
 * The load generator's side of the benches: node:http with keep-alive (far cheaper for the
 * generator than fetch, on cores it shares with the servers), free ports, and a process's CPU
 * time from /proc, which shows a server's cost whatever else the machine is doing.
 */
import { readFileSync } from 'node:fs'
import { Agent, type IncomingHttpHeaders, request as httpRequest } from 'node:http'
import { type AddressInfo, createServer } from 'node:net'

const agent = new Agent({ keepAlive: true, maxSockets: 64 })

export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

export function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers }
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body)
    const req = httpRequest(url, { method: options.method ?? 'GET', agent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      )
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

/** Ends the kept-alive connections, so the bench process can exit. */
export const closeConnections = () => agent.destroy()

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** CPU seconds a process has used so far (utime + stime from /proc, in USER_HZ ticks; NaN elsewhere). */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return Number.NaN
  }
}

export const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : Number.NaN
