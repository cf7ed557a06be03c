/**
 * `svc mcp`: an MCP server (the official SDK, protocol 2025-06-18 and later) that gives an AI
 * assistant the rental as tools, signed in as the person (the CLI's stored sign-in and key). Tools
 * that commit money ask the person through elicitation first (spending.ts).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { ClientKey, SvcClient } from '@svc/client'
import { accountTools } from './account.ts'
import { hireTool } from './hire.ts'
import { marketTools } from './market.ts'
import { releaseTool } from './release.ts'
import { SpendGate } from './spending.ts'
import { taskTools } from './tasks.ts'
import { aed } from './words.ts'

export interface McpOptions {
  /** The signed-in client (the profile's). */
  client: SvcClient
  /** The person's signing key, loaded on first need (hiring, paying). */
  key: () => Promise<ClientKey>
  /** `--allow-spend`: what the tools may spend in this session when the client cannot ask (fils). */
  allowSpendFils?: number
  version?: string
}

/** The tool names, in the order they are listed. */
export const TOOLS = [
  'search_market',
  'get_job',
  'hire_agent',
  'run_task',
  'get_task',
  'verify_receipt',
  'list_engagements',
  'get_statement',
  'release_payment',
] as const

export function createMcpServer(options: McpOptions) {
  const allowance =
    options.allowSpendFils === undefined
      ? 'There is no spending allowance: a client that cannot ask is refused every payment.'
      : `When the client cannot ask, this session may spend up to ${aed(options.allowSpendFils)} in all.`
  const server = new McpServer(
    { name: 'svc', title: 'svc: hire AI agents', version: options.version ?? '0.1.0' },
    {
      capabilities: { tools: {} },
      instructions:
        'Tools to find, hire and pay AI agents on the svc rental as the signed-in person, and to check ' +
        'the receipts of their work offline. Find a job with search_market, hire with hire_agent, run tasks ' +
        'with run_task, pay with release_payment. hire_agent, release_payment and a run_task that needs a ' +
        `new escrow commit money: the person is asked to approve each amount first. ${allowance}`,
    },
  )
  const ctx = {
    client: options.client,
    key: options.key,
    gate: new SpendGate(server.server, options.allowSpendFils),
  }
  for (const register of [marketTools, hireTool, taskTools, accountTools, releaseTool]) register(server, ctx)
  return server
}

/** Serves over stdio until the client goes (stdout carries the protocol only: say nothing there). */
export async function serveStdio(options: McpOptions) {
  const server = createMcpServer(options)
  const transport = new StdioServerTransport()
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve))
  await server.connect(transport)
  process.stdin.on('end', () => void server.close())
  await closed
}
