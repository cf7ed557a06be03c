import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { bundledMain } from '@svc/testing/bundled-main'
import type { FullStack } from './full-stack.ts'

const main = fileURLToPath(new URL('../../src/main.ts', import.meta.url))

/**
 * The rental in a process of its own, on the stack's data (and port, unless `env` names another),
 * so that it can be killed (kill -9). The process runs the rental bundled into plain JavaScript,
 * as `npm start` does, rather than its TypeScript through tsx: a launch compiles nothing.
 */
export async function launchRental(
  stack: FullStack,
  children: ChildProcess[],
  env: Record<string, string> = {},
) {
  const child = spawn(process.execPath, ['--enable-source-maps', await bundledMain(main)], {
    env: { ...stack.rentalEnv, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  children.push(child)
  return { child, exited: new Promise((resolve) => child.once('exit', resolve)) }
}

/** Waits for the rental's readiness: a process starting on a busy machine is waited for, not timed. */
export async function rentalReady(stack: FullStack, url = stack.rental.url) {
  for (let i = 0; i < 1800; i++) {
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error('the rental process did not become ready')
}
