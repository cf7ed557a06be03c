/**
 * `svc mcp [--allow-spend AED]`: the MCP server over stdio, signed in from the profile (SVC_HOME).
 * Nothing is ever asked on the terminal: stdin and stdout carry the protocol, so the signing key's
 * passphrase comes from SVC_KEY_PASSPHRASE (set in the MCP client's configuration).
 */
import type { Command } from 'commander'
import { type Cli, usage } from '../cli.ts'
import { notSignedIn, openProfile, type ProfileOptions } from '../profile.ts'
import { serveStdio } from './server.ts'
import { parseAed } from './words.ts'

export interface McpCommandOptions {
  /** `--allow-spend`: AED the tools may spend in this session when the client cannot ask. */
  allowSpend?: string
}

/** The allowance in fils, or a sentence when it is not an amount of AED. */
export function allowanceOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const fils = parseAed(text)
  if (fils === undefined)
    throw usage(`--allow-spend takes an amount of AED (for example 25 or 25.50), not “${text}”`)
  return fils
}

/** Serves until the MCP client goes; refuses to start without a sign-in (the client shows why). */
export async function runMcp(profileOptions: ProfileOptions, options: McpCommandOptions = {}) {
  const allowSpendFils = allowanceOf(options.allowSpend)
  const profile = await openProfile({ ...profileOptions, interactive: false })
  if (!profile.signedIn) throw notSignedIn()
  await serveStdio({
    client: profile.client,
    key: () => profile.key(),
    ...(allowSpendFils === undefined ? {} : { allowSpendFils }),
  })
}

/** The `svc mcp` entry of the command registry (commands/index.ts). */
export function mcpCommand(program: Command, cli: Cli) {
  program
    .command('mcp')
    .description('serve the MCP tools over stdio to an AI assistant (docs/mcp.md); payments ask you first')
    .option(
      '--allow-spend <AED>',
      'what the tools may spend in this session when the MCP client cannot ask you (for example 25.00)',
    )
    .action(async (options: McpCommandOptions) => {
      const { idp, rental, ledger } = cli.options
      await runMcp(
        { ...(idp ? { idp } : {}), ...(rental ? { rental } : {}), ...(ledger ? { ledger } : {}) },
        options,
      )
    })
}
