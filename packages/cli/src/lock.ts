/**
 * A lock between processes on this machine: a file made with O_EXCL (`open(path, 'wx')`) holding
 * its holder's pid and host. A waiter polls until the file is gone; a lock whose holder died (same
 * host) or that is older than `staleMs` (a holder hung, or another host) is taken over.
 *
 *     await withFileLock(join(home, 'credentials.json.lock'), async () => { … })
 */
import { open, readFile, stat, unlink } from 'node:fs/promises'
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import { SvcError } from '@svc/client'
import { alive } from '@svc/kit/process'

export interface LockOptions {
  /** A lock older than this is a holder's that hung or died elsewhere: taken over. */
  staleMs?: number
  /** How long to wait for the lock before giving up. */
  waitMs?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function tryTake(path: string, holder: string): Promise<boolean> {
  try {
    const file = await open(path, 'wx', 0o600)
    try {
      await file.writeFile(holder)
    } finally {
      await file.close()
    }
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw err
  }
}

/** Whether the lock at `path` is left over; its holder is read while the file is there. */
async function isStale(path: string, staleMs: number): Promise<{ stale: boolean; ino?: number }> {
  try {
    const before = await stat(path)
    if (Date.now() - before.mtimeMs > staleMs) return { stale: true, ino: before.ino }
    const holder = JSON.parse(await readFile(path, 'utf8')) as { pid?: number; host?: string }
    const dead = holder.host === hostname() && Number.isInteger(holder.pid) && !alive(holder.pid!)
    return { stale: dead, ino: before.ino }
  } catch {
    // gone, or still being written by its holder (not JSON yet): not stale
    return { stale: false }
  }
}

export async function withFileLock<T>(
  path: string,
  critical: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const staleMs = options.staleMs ?? 30_000
  const deadline = Date.now() + (options.waitMs ?? staleMs * 2)
  const holder = JSON.stringify({ pid: process.pid, host: hostname(), id: randomUUID() })
  for (let pause = 10; !(await tryTake(path, holder)); pause = Math.min(pause * 2, 200)) {
    const { stale, ino } = await isStale(path, staleMs)
    if (stale) {
      // removed only if it is still the stale file: not a lock another waiter took over just now
      const now = await stat(path).catch(() => undefined)
      if (now?.ino === ino) await unlink(path).catch(() => {})
      continue
    }
    if (Date.now() > deadline)
      throw new SvcError(
        'lock_timeout',
        0,
        `another svc process holds ${path}; try again, or delete that file`,
      )
    await sleep(pause * (0.5 + Math.random()))
  }
  try {
    return await critical()
  } finally {
    // not a lock taken over from this holder while it hung
    if ((await readFile(path, 'utf8').catch(() => '')) === holder) await unlink(path).catch(() => {})
  }
}
