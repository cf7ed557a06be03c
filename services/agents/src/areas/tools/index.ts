import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { Type } from 'typebox'
import { defineArea } from '../../context.ts'
import { notesServer } from './mcp.ts'
import { NoteStore } from './notes.ts'

const jsonRpcError = (code: number, message: string) => ({
  jsonrpc: '2.0',
  error: { code, message },
  id: null,
})

/**
 * The demo tool server: a notes store behind MCP (Streamable HTTP, stateless, JSON answers) at
 * `/tools/notes/mcp`, reached with an API key (`Authorization: Bearer nk_…`) made by
 * `POST /tools/notes/keys`. It keeps its notebooks in memory (bounded), so the whole connect path
 * runs offline in `npm start` and in tests.
 */
export const toolsArea = defineArea({
  name: 'tools',
  mount(app, ctx) {
    const store = new NoteStore()
    const mcpUrl = `${ctx.baseUrl.replace(/\/+$/, '')}/tools/notes/mcp`

    app.post(
      '/tools/notes/keys',
      {
        schema: {
          summary: 'A demo notebook’s API key (shown once): a new notebook, or another key of one',
          tags: ['tools'],
          body: Type.Optional(
            Type.Object(
              {
                scope: Type.Optional(Type.Union([Type.Literal('read'), Type.Literal('write')])),
                notebook_id: Type.Optional(Type.String({ pattern: '^nb_[A-Za-z0-9_-]{12}$' })),
              },
              { additionalProperties: false },
            ),
          ),
          response: {
            404: Type.Object({ error: Type.Object({ code: Type.String(), message: Type.String() }) }),
            201: Type.Object({
              api_key: Type.String(),
              notebook_id: Type.String(),
              scope: Type.String(),
              mcp_url: Type.String(),
            }),
          },
        },
      },
      async (request, reply) => {
        const scope = request.body?.scope ?? 'write'
        const made = store.newKey(scope, request.body?.notebook_id)
        if (!made) return reply.code(404).send({ error: { code: 'not_found', message: 'no such notebook' } })
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send({ api_key: made.key, notebook_id: made.notebook_id, scope, mcp_url: mcpUrl })
      },
    )

    app.route({
      method: ['GET', 'DELETE'],
      url: '/tools/notes/mcp',
      schema: { summary: 'Not offered: the demo tool server is stateless (POST only)', tags: ['tools'] },
      handler: async (_request, reply) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .send(jsonRpcError(-32000, 'Method not allowed.') as never),
    })

    app.post(
      '/tools/notes/mcp',
      {
        schema: {
          summary: 'The demo notes tool server: MCP over Streamable HTTP (tools/list, tools/call)',
          description:
            'Authorization: Bearer <API key from POST /tools/notes/keys>. Tools: notes.list, notes.wait (read keys), notes.create, notes.delete (write keys).',
          tags: ['tools'],
        },
      },
      async (request, reply) => {
        const match = /^Bearer (\S+)$/i.exec(request.headers.authorization?.trim() ?? '')
        const opened = match ? store.open(match[1]!) : undefined
        // looked up by the key's SHA-256: no comparison of the secret itself
        if (!opened)
          return reply
            .code(401)
            .header('www-authenticate', `Bearer realm="notes", error="invalid_token"`)
            .send(jsonRpcError(-32001, 'an API key of the notes server is required (Bearer)') as never)
        const server = notesServer(opened.notebook, opened.scope, ctx.version)
        const transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        })
        reply.hijack()
        reply.raw.on('close', () => {
          void transport.close()
          void server.close()
        })
        await server.connect(transport)
        await transport.handleRequest(request.raw, reply.raw, request.body)
      },
    )
    return store
  },
})
