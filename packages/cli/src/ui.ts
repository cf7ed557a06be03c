/**
 * The terminal: prompts and spinners on stderr (stdout carries only the command's output), and
 * nothing asked when there is no terminal to ask on.
 */
import * as clack from '@clack/prompts'
import { SvcError } from '@svc/client'

const output = process.stderr

/** Whether a person can be asked (stdin and stderr are terminals). */
export const canAsk = () => Boolean(process.stdin.isTTY && process.stderr.isTTY)

function answered<T>(value: T | symbol): T {
  if (typeof value === 'symbol' || clack.isCancel(value)) throw new SvcError('cancelled', 0, 'cancelled')
  return value
}

export async function askPassphrase(message: string): Promise<string> {
  return answered<string>(await clack.password({ message, output }))
}

export async function askConfirm(message: string): Promise<boolean> {
  return answered<boolean>(await clack.confirm({ message, output, initialValue: false }))
}

/** A spinner on stderr until stopped (a plain line when stderr is no terminal). */
export function startSpinner(message: string): { stop(done: string): void; error(why: string): void } {
  if (!process.stderr.isTTY) {
    output.write(`${message}\n`)
    return { stop: () => {}, error: () => {} }
  }
  const spin = clack.spinner({ output })
  spin.start(message)
  return { stop: (done) => spin.stop(done), error: (why) => spin.error(why) }
}

/** A line of progress on stderr. */
export const note = (line: string) => void output.write(`${line}\n`)
