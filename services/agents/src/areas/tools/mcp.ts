import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { createNote, deleteNote, listNotes, type NoteScope, type NoteStore } from './notes.ts'

type Notebook = NonNullable<ReturnType<NoteStore['open']>>['notebook']

interface NoteTool extends Tool {
  scope: NoteScope
  run(notebook: Notebook, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult>
}

const str = (args: Record<string, unknown>, name: string, max: number, required: boolean, min = 0) => {
  const value = args[name]
  if (value === undefined && !required) return undefined
  if (typeof value !== 'string' || value.length < min || value.length > max)
    throw new McpError(ErrorCode.InvalidParams, `${name} must be a string of ${min}-${max} characters`)
  return value
}
const int = (args: Record<string, unknown>, name: string, min: number, max: number, fallback: number) => {
  const value = args[name] ?? fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new McpError(ErrorCode.InvalidParams, `${name} must be an integer from ${min} to ${max}`)
  return value
}
const onlyKnown = (args: Record<string, unknown>, known: string[]) => {
  const extra = Object.keys(args).filter((k) => !known.includes(k))
  if (extra.length) throw new McpError(ErrorCode.InvalidParams, `unknown arguments: ${extra.join(', ')}`)
}
const answer = (text: string, data: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text }],
  structuredContent: data,
})

/** The demo tool server's tools: names, JSON Schemas, MCP annotations and the scope each needs. */
export const NOTE_TOOLS: NoteTool[] = [
  {
    name: 'notes.list',
    title: 'List notes',
    description: 'The newest notes (up to limit, default 20), optionally only those containing query.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', maxLength: 200 },
        limit: { type: 'integer', minimum: 1, maximum: 100 },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    scope: 'read',
    async run(notebook, args) {
      onlyKnown(args, ['query', 'limit'])
      const notes = listNotes(notebook, str(args, 'query', 200, false), int(args, 'limit', 1, 100, 20))
      return answer(`${notes.length} note(s)`, { notes })
    },
  },
  {
    name: 'notes.create',
    title: 'Create a note',
    description: 'Adds a note (title and body) to the notebook and answers it with its id.',
    inputSchema: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200 },
        body: { type: 'string', maxLength: 10_000 },
      },
      required: ['title'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    scope: 'write',
    async run(notebook, args) {
      onlyKnown(args, ['title', 'body'])
      const note = createNote(
        notebook,
        str(args, 'title', 200, true, 1)!,
        str(args, 'body', 10_000, false) ?? '',
      )
      if (note === 'full') return { ...answer('the notebook is full (500 notes)', {}), isError: true }
      return answer(`created ${note.id}`, { note })
    },
  },
  {
    name: 'notes.delete',
    title: 'Delete a note',
    description: 'Removes a note by its id (deleting one already gone answers deleted: false).',
    inputSchema: {
      type: 'object',
      properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    scope: 'write',
    async run(notebook, args) {
      onlyKnown(args, ['id'])
      const deleted = deleteNote(notebook, str(args, 'id', 100, true, 1)!)
      return answer(deleted ? 'deleted' : 'no such note', { deleted })
    },
  },
  {
    name: 'notes.wait',
    title: 'Wait',
    description: 'Answers after ms milliseconds (at most 60 s): a slow tool, to try timeouts with.',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0, maximum: 60_000 } },
      required: ['ms'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    scope: 'read',
    async run(_notebook, args, signal) {
      onlyKnown(args, ['ms'])
      const ms = int(args, 'ms', 0, 60_000, 0)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms)
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true })
      })
      return answer(`waited ${ms} ms`, { waited_ms: ms })
    },
  },
]

const reaches = (scope: NoteScope, tool: NoteTool) => scope === 'write' || tool.scope === 'read'

/**
 * One MCP server for one request (the transport is stateless): `tools/list` answers the tools the
 * key's scope reaches, `tools/call` runs one on the key's notebook.
 */
export function notesServer(notebook: Notebook, scope: NoteScope, version: string): Server {
  const server = new Server({ name: 'svc-demo-notes', version }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: NOTE_TOOLS.filter((t) => reaches(scope, t)).map(({ scope: _s, run: _r, ...tool }) => tool),
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = NOTE_TOOLS.find((t) => t.name === request.params.name)
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `no tool ${request.params.name}`)
    if (!reaches(scope, tool))
      return { ...answer(`this key may only read: ${tool.name} needs a write key`, {}), isError: true }
    return tool.run(notebook, request.params.arguments ?? {}, extra.signal)
  })
  return server
}
