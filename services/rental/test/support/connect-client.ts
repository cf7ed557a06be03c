import { createHash, randomBytes } from 'node:crypto'
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { sql } from 'kysely'
import type { FullStack } from './full-stack.ts'

/** A tool-call action as the connect routes answer it (the fields the tests read). */
export interface Action {
  id: string
  tool: string
  state: string
  reason: string | null
  approval_id: string | null
  approved_by: string | null
  arguments_sha256: string
  result: { structuredContent?: Record<string, unknown>; isError?: boolean } | null
  result_sha256: string | null
  attempts: number
  receipt: { id: string; leaf_hash: string | null } | null
}
/** One tool call as the note-taker reports it in its result. */
export interface Call {
  tool: string
  status: number
  action_id: string | null
  state: string | null
  approval_id: string | null
  error: string | null
}

/** A key of the agents service's demo notes server, as `POST /tools/notes/keys` answers it. */
export interface NotesKey {
  api_key: string
  notebook_id: string
  mcp_url: string
}

/** A demo notebook's key: a new notebook, or (with `notebookId`) another key of one. */
export async function newNotesKey(stack: FullStack, scope: 'read' | 'write' = 'write', notebookId?: string) {
  const res = await fetch(`${stack.agents.url}/tools/notes/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ scope, ...(notebookId ? { notebook_id: notebookId } : {}) }),
  })
  if (res.status !== 201) throw new Error(`notes key: ${res.status} ${await res.text()}`)
  return (await res.json()) as NotesKey
}

/** The notebook's notes, read with the official SDK client straight from the demo server. */
export async function notesIn(key: NotesKey) {
  const client = new McpClient({ name: 'connect-test', version: '1' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(key.mcp_url), {
      requestInit: { headers: { authorization: `Bearer ${key.api_key}` } },
    }),
  )
  const listed = await client.callTool({ name: 'notes.list', arguments: { limit: 100 } })
  await client.close()
  return (listed.structuredContent as { notes: Array<{ title: string; body: string }> }).notes
}

/**
 * A tool-call credential of alice's running task, stored as the rental stores the ones it gives
 * agents (its SHA-256 only): tests use it to call `POST /api/connect/calls` as the task's agent.
 */
export async function storeToolCredential(stack: FullStack, taskId: string, engagementId: string) {
  const token = `tct_${randomBytes(32).toString('base64url')}`
  await sql`insert into connect_task_tokens (token_sha256, task_id, org_id, engagement_id, expires_at)
    values (${createHash('sha256').update(token).digest('hex')}, ${taskId},
      ${stack.alice.me.organization.id}, ${engagementId}, ${new Date(Date.now() + 3_600_000)})`.execute(
    stack.db,
  )
  return token
}
