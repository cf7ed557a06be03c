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

/** A spinner on stderr while `work` runs (plain lines when stderr is no terminal). */
export async function withSpinner<T>(message: string, work: () => Promise<T>, done?: string): Promise<T> {
  if (!process.stderr.isTTY) {
    output.write(`${message}\n`)
    return work()
  }
  const spin = clack.spinner({ output })
  spin.start(message)
  try {
    const result = await work()
    spin.stop(done ?? message)
    return result
  } catch (err) {
    spin.error((err as Error).message)
    throw err
  }
}

/** A line of progress on stderr. */
export const note = (line: string) => void output.write(`${line}\n`)
