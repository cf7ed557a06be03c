/**
 * What every tool shares: the signed-in client, the signing key (loaded on first need), the
 * spending gate, and the shape of an answer: a text for the assistant to read (names and money in
 * words) with structured content (ids) matching the tool's output schema; a failure is a tool
 * result with `isError` and one sentence.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { type ClientKey, newIdempotencyKey, type SvcClient, SvcError } from '@svc/client'
import type { SpendGate } from './spending.ts'
import { errorWords } from './words.ts'

export interface ToolContext {
  client: SvcClient
  /** The person's signing key (the CLI's profile key): needed to hire and to pay. */
  key: () => Promise<ClientKey>
  gate: SpendGate
}

export type Registrar = (server: McpServer, ctx: ToolContext) => void

export const answer = (text: string, structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text }],
  structuredContent: structured,
})

export const failure = (sentence: string): CallToolResult => ({
  content: [{ type: 'text', text: sentence }],
  isError: true,
})

/** A tool's handler with every failure turned into a sentence (never a stack trace). */
export const guarded =
  <A>(run: (args: A) => Promise<CallToolResult>) =>
  async (args: A): Promise<CallToolResult> => {
    try {
      return await run(args)
    } catch (err) {
      return failure(errorWords(err))
    }
  }

/** A refused request is one the service answered 4xx: nothing happened, so nothing was spent. */
export const refusedBeforeSpending = (err: unknown) =>
  err instanceof SvcError && err.status >= 400 && err.status < 500

/** The header every write carries (a retried write pays once). */
export const idempotent = () => ({ 'idempotency-key': newIdempotencyKey() })

/** `did:key:z6Mk…abcd`: a DID short enough to read. */
export const shortDid = (did: string) => (did.length > 28 ? `${did.slice(0, 16)}…${did.slice(-6)}` : did)
