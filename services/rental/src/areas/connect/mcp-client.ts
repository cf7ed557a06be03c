import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { LookupAddress } from 'node:dns'
import { AppError } from '@svc/kit'
import { checkPublicUrl, pinnedAgent, publicAgent, resolvePublic } from '@svc/kit/http/public-fetch'
import { type Agent, fetch as undiciFetch } from 'undici'
import { discoverResource } from './resource-metadata.ts'

/** The addresses a tool server's name was checked to resolve to (egress), to connect to them only. */
export type Pins = LookupAddress[] | undefined

/** A tool server's refusal or failure, in its own words where it gave any (a 4XX for the client). */
export class ToolServerError extends Error {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message)
  }
}

export interface ToolServerOptions {
  allowPrivate: boolean
  timeoutMs: number
}

/** A tool as the rental keeps it: its name, what it says it does, its input schema and MCP annotations. */
export interface ToolInfo {
  name: string
  title: string | null
  description: string | null
  input_schema: Record<string, unknown>
  annotations: {
    read_only: boolean
    destructive: boolean
    idempotent: boolean
  }
}

const toolInfo = (t: Tool): ToolInfo => ({
  name: t.name,
  title: t.title ?? t.annotations?.title ?? null,
  description: t.description ?? null,
  input_schema: t.inputSchema as Record<string, unknown>,
  annotations: {
    read_only: t.annotations?.readOnlyHint === true,
    // MCP's defaults: a tool not said to be read-only may be destructive and is not idempotent
    destructive: t.annotations?.readOnlyHint !== true && t.annotations?.destructiveHint !== false,
    idempotent: t.annotations?.readOnlyHint === true || t.annotations?.idempotentHint === true,
  },
})

const MAX_TOOLS = 200

/**
 * The rental's side of MCP (Streamable HTTP, the official SDK client): each use opens a session
 * with the key as a Bearer token, does its one thing within `timeoutMs` (a server that hangs is
 * cut there) and closes. Unless `allowPrivate`, the server's name is resolved once, each address
 * checked public, and the session's connections go to those addresses only (DNS pinning: no
 * rebinding window between the check and the connection); redirects are never followed.
 */
export class ToolServers {
  readonly #agent: Agent
  constructor(readonly options: ToolServerOptions) {
    this.#agent = publicAgent({ allowPrivate: options.allowPrivate, connectTimeoutMs: options.timeoutMs })
  }

  /** A URL a client gives, checked (https and public outside development): its normal form, or a ToolServerError. */
  async checkUrl(url: string): Promise<string> {
    try {
      const parsed = await checkPublicUrl(url, { allowPrivate: this.options.allowPrivate })
      if (parsed.hash) throw new ToolServerError('the URL must not have a fragment')
      return parsed.href
    } catch (err) {
      throw new ToolServerError(`the tool server URL is refused: ${(err as Error).message}`)
    }
  }

  /** The dispatcher a session uses: pinned to the checked addresses (given, or resolved here). */
  async #agentFor(url: string, pins: Pins): Promise<{ agent: Agent; pinned: boolean }> {
    if (this.options.allowPrivate) return { agent: this.#agent, pinned: false }
    let addresses: LookupAddress[] | null | undefined = pins
    if (!addresses) {
      try {
        addresses = await resolvePublic(url, { allowPrivate: false })
      } catch (err) {
        throw new ToolServerError(`the tool server URL is refused: ${(err as Error).message}`)
      }
    }
    if (!addresses) return { agent: this.#agent, pinned: false }
    const host = new URL(url).hostname
    return { agent: pinnedAgent(host, addresses, { connectTimeoutMs: this.options.timeoutMs }), pinned: true }
  }

  /** The tool server's RFC 9728 metadata (how to get a token for it), fetched over the session's rules. */
  async resourceOf(url: string, pins?: Pins, admit?: (url: string) => Promise<unknown>) {
    const { agent, pinned } = await this.#agentFor(url, pins)
    try {
      return await discoverResource(url, {
        serverAgent: agent,
        metadataAgent: this.#agent,
        allowPrivate: this.options.allowPrivate,
        timeoutMs: this.options.timeoutMs,
        ...(admit ? { admit } : {}),
      })
    } catch (err) {
      // a refusal of the metadata URL by the caller's policy is the caller's answer
      if (err instanceof AppError) throw err
      throw new ToolServerError(`the tool server ${(err as Error).message}`)
    } finally {
      if (pinned) void agent.close()
    }
  }

  async #session<T>(
    url: string,
    key: string,
    work: (client: Client, signal: AbortSignal) => Promise<T>,
    pins: Pins,
  ) {
    const signal = AbortSignal.timeout(this.options.timeoutMs)
    const { agent, pinned } = await this.#agentFor(url, pins)
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: (input, init) =>
        undiciFetch(input as string, {
          ...(init as object),
          redirect: 'manual',
          dispatcher: agent,
          signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal,
        }) as unknown as Promise<Response>,
    })
    const client = new Client({ name: 'svc-rental', version: '0.1.0' })
    try {
      await client.connect(transport, { signal, timeout: this.options.timeoutMs })
      return { value: await work(client, signal), server: client.getServerVersion() }
    } catch (err) {
      if (signal.aborted)
        throw new ToolServerError(`the tool server did not answer within ${this.options.timeoutMs} ms`, true)
      throw new ToolServerError(describe(err))
    } finally {
      await client.close().catch(() => undefined)
      if (pinned) void agent.close()
    }
  }

  /** The tools the key reaches (tools/list, every page up to 200 tools) and the server's name. */
  async listTools(url: string, key: string, pins?: Pins) {
    const { value, server } = await this.#session(
      url,
      key,
      async (client, signal) => {
        const tools: Tool[] = []
        let cursor: string | undefined
        do {
          const page = await client.listTools(cursor ? { cursor } : {}, {
            signal,
            timeout: this.options.timeoutMs,
          })
          tools.push(...page.tools)
          cursor = page.nextCursor
        } while (cursor && tools.length < MAX_TOOLS)
        return tools.slice(0, MAX_TOOLS).map(toolInfo)
      },
      pins,
    )
    return { tools: value, server: server ? { name: server.name, version: server.version } : null }
  }

  /** One tools/call; the tool's own error (`isError`) is an answer, not a failure. */
  async callTool(url: string, key: string, name: string, args: Record<string, unknown>, pins?: Pins) {
    const { value } = await this.#session(
      url,
      key,
      async (client, signal) =>
        (await client.callTool({ name, arguments: args }, undefined, {
          signal,
          timeout: this.options.timeoutMs,
        })) as CallToolResult,
      pins,
    )
    return value
  }
}

/** The server's own words, short and on one line (the SDK prefixes its own context). */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : ''
  return `the tool server refused or failed: ${message}${cause}`.replace(/\s+/g, ' ').slice(0, 500)
}
