/**
 * What every tool shares: the signed-in client, the signing key (loaded on first need), the
 * spending gate, and the shape of an answer: a text for the assistant to read (names and money in
 * words) with structured content (ids) matching the tool's output schema; a failure is a tool
 * result with `isError` and one sentence.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js'
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

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

/** A tool's handler with every failure turned into a sentence (never a stack trace). */
export const guarded =
  <A>(run: (args: A, extra: Extra) => Promise<CallToolResult>) =>
  async (args: A, extra: Extra): Promise<CallToolResult> => {
    try {
      return await run(args, extra)
    } catch (err) {
      return failure(errorWords(err))
    }
  }

/**
 * Progress for the caller, when it asked for it (a `progressToken`): `notifications/progress`,
 * which also keeps a client's request timeout from running out while a task works.
 */
export function progressOf(extra: Extra): (progress: number, message: string) => void {
  const token = extra._meta?.progressToken
  if (token === undefined) return () => {}
  return (progress, message) =>
    void extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, message },
      })
      .catch(() => {})
}

/** A refused request is one the service answered 4xx: nothing happened, so nothing was spent. */
export const refusedBeforeSpending = (err: unknown) =>
  err instanceof SvcError && err.status >= 400 && err.status < 500

/** The header every write carries (a retried write pays once). */
export const idempotent = () => ({ 'idempotency-key': newIdempotencyKey() })

/** `did:key:z6Mk…abcd`: a DID short enough to read. */
export const shortDid = (did: string) => (did.length > 28 ? `${did.slice(0, 16)}…${did.slice(-6)}` : did)
