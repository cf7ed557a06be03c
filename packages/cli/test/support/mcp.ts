import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { generateEd25519 } from '@svc/trust/ed25519'
import { deviceGrant } from '../../../../services/rental/test/support/device-grant.ts'
import type { FullStack } from '../../../../services/rental/test/support/full-stack.ts'

/** A tool's answer: its text content joined, and the rest as the SDK gives it. */
export interface ToolResult {
  text: string
  isError?: boolean
  structuredContent?: Record<string, unknown>
}

const ENTRY = fileURLToPath(new URL('./mcp-stdio.ts', import.meta.url))

/**
 * `svc mcp` as a process of its own, signed in as alice (a device grant of her own: refresh
 * tokens rotate, so no two processes share one), with the official SDK's client over stdio. The
 * client declares elicitation when given `elicit`: the person's answers, in turn; `asked` keeps the
 * messages they were shown.
 */
export class McpProcess {
  readonly asked: string[] = []
  private constructor(
    readonly client: Client,
    private readonly transport: StdioClientTransport,
  ) {}

  static async start(stack: FullStack, options: { elicit?: ElicitResult[]; allowSpendFils?: number } = {}) {
    const tokens = await deviceGrant({ idp: stack.idp.url, rental: stack.rental.url }, stack.alice.jar)
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', ENTRY],
      env: {
        ...(process.env as Record<string, string>),
        SVC_IDP_URL: stack.idp.url,
        SVC_RENTAL_URL: stack.rental.url,
        SVC_LEDGER_URL: stack.ledger.url,
        SVC_TEST_TOKENS: JSON.stringify(tokens),
        SVC_TEST_KEY_SEED: Buffer.from(generateEd25519().seed).toString('base64url'),
        ...(options.allowSpendFils !== undefined
          ? { SVC_TEST_ALLOW_SPEND: String(options.allowSpendFils) }
          : {}),
      },
      stderr: 'inherit',
    })
    const client = new Client(
      { name: 'mcp-test', version: '1.0.0' },
      { capabilities: options.elicit ? { elicitation: {} } : {} },
    )
    const started = new McpProcess(client, transport)
    if (options.elicit) {
      const answers = [...options.elicit]
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        started.asked.push(request.params.message)
        const next = answers.shift()
        if (!next) throw new Error('the test gave no answer for this question')
        return next
      })
    }
    await client.connect(transport)
    return started
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const res = (await this.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 })) as {
      content: Array<{ type: string; text?: string }>
      isError?: boolean
      structuredContent?: Record<string, unknown>
    }
    // MCP_SHOW=1 prints each call and its text, to read what an assistant is told
    if (process.env.MCP_SHOW)
      console.error(`\n## ${name} ${JSON.stringify(args)}\n${res.content.map((c) => c.text).join('\n')}`)
    return {
      text: res.content.map((c) => c.text ?? '').join('\n'),
      ...(res.isError ? { isError: true } : {}),
      ...(res.structuredContent ? { structuredContent: res.structuredContent } : {}),
    }
  }

  close() {
    return this.client.close()
  }
}
