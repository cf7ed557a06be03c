/**
 * What every command is given: the global options (`--idp`, `--rental`, `--ledger`, `--json`), the
 * profile of SVC_HOME, and one way out: in `--json`, exactly one JSON document on stdout; otherwise
 * lines for a person. Progress goes to stderr in both.
 */
import { SvcError } from '@svc/client'
import type { Command } from 'commander'
import { openProfile, type Profile } from './profile.ts'
import { note } from './ui.ts'

export interface GlobalOptions {
  idp?: string
  rental?: string
  ledger?: string
  json?: boolean
}

export class Cli {
  #profile: Promise<Profile> | undefined
  /** The process's exit code once the command ends (1: a check failed). */
  exitCode = 0

  constructor(private readonly program: Command) {}

  get options(): GlobalOptions {
    return this.program.opts<GlobalOptions>()
  }

  get json(): boolean {
    return this.options.json === true
  }

  profile(): Promise<Profile> {
    const { idp, rental, ledger } = this.options
    this.#profile ??= openProfile({
      ...(idp ? { idp } : {}),
      ...(rental ? { rental } : {}),
      ...(ledger ? { ledger } : {}),
      // in --json, nothing is asked unless stdin is a terminal
    })
    return this.#profile
  }

  /** Progress for a person, on stderr (kept quiet in --json). */
  progress(line: string): void {
    if (!this.json) note(line)
  }

  /** The command's answer: `data` as JSON with --json, else `human` lines on stdout. */
  out(data: unknown, human: () => string | string[]): void {
    if (this.json) {
      process.stdout.write(`${JSON.stringify(data, null, 2)}\n`)
      return
    }
    const lines = human()
    process.stdout.write(`${Array.isArray(lines) ? lines.join('\n') : lines}\n`)
  }
}

/** A sentence for wrong input: the command stops with it, exit code 2. */
export const usage = (message: string) => new SvcError('usage', 0, message)
