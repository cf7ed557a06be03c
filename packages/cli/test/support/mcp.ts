import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { type CookieJar, tempFolder } from '@svc/kit/testing'
import { csrfOf } from '@svc/testing/idp-flow'
import type { FullStack } from '../../../../services/rental/test/support/full-stack.ts'
import { openProfile } from '../../src/profile.ts'
import { bundledMain } from '@svc/testing/bundled-main'

/** A tool's answer: its text content joined, and the rest as the SDK gives it. */
export interface ToolResult {
  text: string
  isError?: boolean
  structuredContent?: Record<string, unknown>
}

/** `svc` as `npx svc` runs it */
export const BIN = fileURLToPath(new URL('../../bin/svc.js', import.meta.url))
/** The command line bundled into plain JavaScript once: each server starts without tsx's compiling. */
const bundled = () => bundledMain(fileURLToPath(new URL('../../src/main.ts', import.meta.url)))
export const PASSPHRASE = 'a long passphrase for the mcp tests'

/**
 * A fresh SVC_HOME signed in as the person of `jar` (signed in at the idp): the CLI's own sign-in
 * (device grant, DPoP-bound tokens), the code allowed on the idp's page as the person would.
 */
export async function signedInHome(stack: FullStack, jar: CookieJar): Promise<string> {
  const home = tempFolder()
  const profile = await openProfile({
    home,
    idp: stack.idp.url,
    rental: stack.rental.url,
    ledger: stack.ledger.url,
    interactive: false,
  })
  await profile.signIn(async (code) => {
    const page = await (await jar.fetch(code.verification_uri_complete!)).text()
    const allowed = await jar.fetch(`${stack.idp.url}/device`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfOf(page), user_code: code.user_code, decision: 'approve' }),
    })
    if (allowed.status !== 200) throw new Error(`allowing the device code answered ${allowed.status}`)
  })
  return home
}

/**
 * `svc mcp` as a process of its own with a SVC_HOME of its own signed in as alice (refresh tokens
 * rotate: no two processes share one), and the official SDK's client over stdio. The client
 * declares elicitation when given `elicit`: the person's answers, in turn; `asked` keeps the
 * messages they were shown.
 */
export class McpProcess {
  readonly asked: string[] = []
  /** The progress notifications' messages, as they came. */
  readonly progress: string[] = []
  private constructor(
    readonly client: Client,
    private readonly transport: StdioClientTransport,
  ) {}

  static async start(
    stack: FullStack,
    options: { elicit?: ElicitResult[]; allowSpend?: string; env?: Record<string, string> } = {},
  ) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        await bundled(),
        'mcp',
        ...(options.allowSpend === undefined ? [] : ['--allow-spend', options.allowSpend]),
      ],
      env: {
        ...(process.env as Record<string, string>),
        SVC_HOME: await signedInHome(stack, stack.alice.jar),
        SVC_IDP_URL: stack.idp.url,
        SVC_RENTAL_URL: stack.rental.url,
        SVC_LEDGER_URL: stack.ledger.url,
        SVC_KEY_PASSPHRASE: PASSPHRASE,
        ...options.env,
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
    const res = (await this.client.callTool({ name, arguments: args }, undefined, {
      timeout: 120_000,
      onprogress: (p) => void this.progress.push(p.message ?? String(p.progress)),
    })) as {
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
