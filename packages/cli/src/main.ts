/**
 * `svc`: the program, its global options, and how it ends: the command's exit code, or one
 * sentence on stderr (in --json, `{"error": {code, message}}` on stdout too) and a non-zero exit,
 * never a stack trace.
 */
import { SvcError } from '@svc/client'
import { Command, CommanderError, Option } from 'commander'
import { Cli } from './cli.ts'
import { COMMANDS } from './commands/index.ts'

const program = new Command('svc')
  .description(
    'Hire AI agents from the terminal: sign in, find and hire agents, run tasks, verify receipts, pay.',
  )
  .addOption(new Option('--idp <url>', 'the identity provider').env('SVC_IDP_URL'))
  .addOption(new Option('--rental <url>', 'the agent rental').env('SVC_RENTAL_URL'))
  .addOption(new Option('--ledger <url>', 'the receipts ledger').env('SVC_LEDGER_URL'))
  .option('--json', 'one JSON document on stdout (progress on stderr)')
  .showSuggestionAfterError()
  .exitOverride()
  .configureOutput({ outputError: () => {} })
const cli = new Cli(program)
for (const register of COMMANDS) register(program, cli)

/** One sentence for what went wrong. */
function sentence(err: unknown): { code: string; message: string; exit: number } {
  if (err instanceof CommanderError) {
    const message = err.message
      .replace(/^error: /, '')
      .replace(/\s*\n\s*/g, ' ')
      .replace(/\.$/, '')
    return {
      code: 'usage',
      message: `${message[0]?.toUpperCase()}${message.slice(1)}. See \`svc --help\`.`,
      exit: 2,
    }
  }
  if (err instanceof SvcError) {
    const exit = err.code === 'usage' ? 2 : 1
    if (err.status === 0 && err.code === 'network_error')
      return { code: err.code, message: `Could not reach the service (${err.message}).`, exit }
    if (err.status === 401 && err.code !== 'not_signed_in')
      return { code: 'not_signed_in', message: `${err.message}: run \`svc login\`.`, exit }
    const text = err.message.replace(/\.$/, '')
    return { code: err.code, message: `${text[0]?.toUpperCase()}${text.slice(1)}.`, exit }
  }
  const cause = (err as { cause?: { code?: string } }).cause
  if (err instanceof TypeError && /fetch failed/.test(err.message))
    return {
      code: 'network_error',
      message: `Could not reach the service (${cause?.code ?? err.message}).`,
      exit: 1,
    }
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR')
    return { code: 'file', message: `${(err as Error).message}.`, exit: 1 }
  return {
    code: 'internal',
    message: `Something went wrong: ${(err as Error).message ?? String(err)}.`,
    exit: 1,
  }
}

try {
  await program.parseAsync(process.argv)
  process.exitCode = cli.exitCode
} catch (err) {
  if (err instanceof CommanderError && (err.exitCode === 0 || /help|version/.test(err.code))) {
    process.exitCode = err.exitCode
  } else {
    const { code, message, exit } = sentence(err)
    if (process.env.SVC_DEBUG) console.error(err)
    if (cli.json) process.stdout.write(`${JSON.stringify({ error: { code, message } }, null, 2)}\n`)
    process.stderr.write(`svc: ${message}\n`)
    process.exitCode = exit
  }
}
