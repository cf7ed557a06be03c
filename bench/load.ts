/**
 * The load generator's side of the benches: node:http with keep-alive (far cheaper for the
 * generator than fetch, on cores it shares with the servers), free ports, and a process's CPU
 * time from /proc, which shows a server's cost whatever else the machine is doing.
 */
import { readdirSync, readFileSync } from 'node:fs'
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

/** A process's name and its CPU seconds (user + system) from /proc; throws when it has ended. */
function procStat(pid: number | string): { name: string; cpuSeconds: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ')
  return {
    name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100,
  }
}

/** CPU seconds a process has used so far (utime + stime from /proc, in USER_HZ ticks; NaN elsewhere). */
export function cpuSeconds(pid: number): number {
  try {
    return procStat(pid).cpuSeconds
  } catch {
    return Number.NaN
  }
}

/**
 * The CPU seconds of every process named `postgres` on this machine: a local server's backends and
 * its own processes (NaN when there is none), for the whole stack's CPU per task on PostgreSQL.
 */
export function postgresCpuSeconds(): number {
  let total = 0
  let found = false
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    try {
      const { name, cpuSeconds } = procStat(pid)
      if (name !== 'postgres') continue
      total += cpuSeconds
      found = true
    } catch {
      // the process ended meanwhile
    }
  }
  return found ? total : Number.NaN
}

export const quantile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : Number.NaN
