import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { Type } from 'typebox'
import { AppError } from '@svc/kit'
import { defineArea } from '../../context.ts'
import { CallerVerifier, Unauthenticated } from '../agents/index.ts'
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
 * `POST /tools/notes/keys`, or with an access token of the idp whose audience is the server's
 * resource (its MCP URL, registered at the idp): the server publishes its RFC 9728 metadata and
 * names it in its 401s, and a token's client gets a notebook of its own. It keeps its notebooks in
 * memory (bounded), so the whole connect path runs offline in `npm start` and in tests.
 */
export const toolsArea = defineArea({
  name: 'tools',
  mount(app, ctx) {
    const store = new NoteStore()
    const base = ctx.baseUrl.replace(/\/+$/, '')
    const mcpUrl = `${base}/tools/notes/mcp`
    const metadataPath = '/.well-known/oauth-protected-resource/tools/notes/mcp'
    // RFC 9068 tokens of the idp for this resource (audience = the MCP URL)
    const verifier = new CallerVerifier({ issuer: ctx.issuer, audience: mcpUrl })
    const challenge = (error?: string) =>
      `Bearer realm="notes", resource_metadata="${base}${metadataPath}"${error ? `, error="${error}"` : ''}`
    /** The notebook and scope a Bearer credential opens: an API key, or an idp token's client. */
    const openWith = async (authorization: string | undefined) => {
      const match = /^Bearer (\S+)$/i.exec(authorization?.trim() ?? '')
      if (!match) return { given: false }
      // looked up by the key's SHA-256: no comparison of the secret itself
      if (match[1]!.startsWith('nk_')) return { given: true, opened: store.open(match[1]!) }
      try {
        const caller = await verifier.verify(authorization)
        return { given: true, opened: store.openForClient(caller.clientId) }
      } catch (err) {
        if (err instanceof Unauthenticated) return { given: true, why: err.message }
        throw err
      }
    }

    app.get(
      metadataPath,
      {
        schema: {
          summary: 'The demo notes server’s protected-resource metadata (RFC 9728)',
          tags: ['tools'],
          response: {
            200: Type.Object({
              resource: Type.String(),
              authorization_servers: Type.Array(Type.String()),
              resource_name: Type.String(),
              bearer_methods_supported: Type.Array(Type.String()),
            }),
          },
        },
      },
      async (_request, reply) =>
        reply.header('cache-control', 'public, max-age=300').send({
          resource: mcpUrl,
          authorization_servers: [ctx.issuer],
          resource_name: 'svc demo notes',
          bearer_methods_supported: ['header'],
        }),
    )

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
            'Authorization: Bearer <API key from POST /tools/notes/keys>, or an access token of the idp for this resource (RFC 9728 metadata at /.well-known/oauth-protected-resource/tools/notes/mcp). Tools: notes.list, notes.wait (read keys), notes.create, notes.delete (write keys).',
          tags: ['tools'],
        },
      },
      async (request, reply) => {
        let found: Awaited<ReturnType<typeof openWith>>
        try {
          found = await openWith(request.headers.authorization)
        } catch (err) {
          if (err instanceof AppError)
            return reply.code(err.status).send(jsonRpcError(-32603, err.message) as never)
          throw err
        }
        const opened = found.opened
        if (!opened)
          return reply
            .code(401)
            .header('www-authenticate', challenge(found.given ? 'invalid_token' : undefined))
            .send(
              jsonRpcError(
                -32001,
                found.why ??
                  'an API key of the notes server is required (Bearer), or an access token of the idp for it',
              ) as never,
            )
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
