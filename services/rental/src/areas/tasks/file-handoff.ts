import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto'
import type { Part } from '@a2a-js/sdk'
import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import { contentDisposition } from '../files/index.ts'
import type { FileRow } from '../files/index.ts'
import type { Actor } from '../events/index.ts'
import { endRunning } from './events.ts'
import type { TaskDeps } from './service.ts'
import { type TaskRow, taskById } from './store.ts'
import { Id } from '../../http/index.ts'

/** At most this many files a task hands its agent. */
export const MAX_TASK_FILES = 20

/** The token of a file URL: `{task_id}.{expiry, unix seconds}.{HMAC-SHA256, base64url}`. */
const TOKEN = /^(tsk_[A-Za-z0-9_-]{1,100})\.([0-9]{1,12})\.([A-Za-z0-9_-]{43})$/

const keys = new WeakMap<Buffer, Buffer>()
/** The URL-signing key: derived from the service key (HKDF), never the service key itself. */
function urlKey(serviceKey: Buffer) {
  let key = keys.get(serviceKey)
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', serviceKey, Buffer.alloc(0), 'rental task file url v1', 32))
    keys.set(serviceKey, key)
  }
  return key
}

const mac = (deps: TaskDeps, fileId: string, taskId: string, expires: number) =>
  createHmac('sha256', urlKey(deps.config.encryptionKey)).update(`${fileId}\n${taskId}\n${expires}`).digest()

/** The file ids a task names (its `file_ids` column), in order. */
export const fileIdsOf = (task: Pick<TaskRow, 'file_ids'>): string[] =>
  Array.isArray(task.file_ids) ? (task.file_ids as string[]) : []

/**
 * The stored files of the task's engagement among `ids`, each once: 404 `file_not_found` for any
 * that is not one (another engagement's, another organization's, deleted, unknown).
 */
export async function taskFiles(
  deps: TaskDeps,
  orgId: string,
  engagementId: string,
  ids: string[],
  trx?: RentalDb,
) {
  const wanted = [...new Set(ids)]
  const rows = await deps.files.ofEngagement(orgId, engagementId, wanted, trx)
  const found = new Map(rows.map((r) => [r.id, r]))
  const missing = wanted.find((id) => !found.has(id))
  if (missing) throw rentalError('file_not_found', `no file ${missing} of the engagement ${engagementId}`)
  return wanted.map((id) => found.get(id)!)
}

/**
 * The A2A 1.0 file parts (`url`, `filename`, `mediaType`) handing the task's files to its agent:
 * each URL the rental's, signed for that file and task, valid RENTAL_FILE_URL_TTL_S.
 */
export function fileParts(deps: TaskDeps, taskId: string, files: FileRow[]): Part[] {
  const expires = Math.floor(deps.now().getTime() / 1000) + deps.config.fileUrlTtlS
  return files.map((file) => {
    const token = `${taskId}.${expires}.${mac(deps, file.id, taskId, expires).toString('base64url')}`
    return {
      content: {
        $case: 'url',
        value: `${deps.baseUrl}/api/files/${encodeURIComponent(file.id)}/content?token=${token}`,
      },
      metadata: {
        svc_file_id: file.id,
        svc_sha256: `sha256:${file.sha256}`,
        size_bytes: Number(file.size_bytes),
      },
      filename: file.name ?? file.id,
      mediaType: file.content_type,
    }
  })
}

/**
 * The file parts of a run of the task; undefined when one of its files is no longer stored (the
 * task then fails, as its agent could not read what it was given).
 */
export async function filesOfRun(deps: TaskDeps, task: TaskRow, actor: Actor) {
  const ids = fileIdsOf(task)
  if (ids.length === 0 || task.engagement_id === null) return []
  try {
    return fileParts(deps, task.id, await taskFiles(deps, task.org_id, task.engagement_id, ids))
  } catch (err) {
    const error = `a file of the task is gone: ${(err as Error).message}`
    await inTransaction(deps.db, (trx) =>
      endRunning(deps, trx, task.id, { state: 'failed', error, at: deps.now(), cause: 'client' }, actor),
    )
    return undefined
  }
}

/**
 * The file a signed URL names, for the agent fetching it: the token's signature (compared in
 * constant time) binds the file, the task and the expiry; past the expiry, or once the task has
 * ended, it is refused. The file must still be stored and of the task's engagement.
 */
async function handedFile(deps: TaskDeps, fileId: string, token: string) {
  const parsed = TOKEN.exec(token)
  if (!parsed) throw rentalError('file_url_invalid', 'the file URL’s token is malformed')
  const [, taskId, expiresText, signature] = parsed as unknown as [string, string, string, string]
  const expires = Number(expiresText)
  const given = Buffer.from(signature, 'base64url')
  const wanted = mac(deps, fileId, taskId, expires)
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted))
    throw rentalError('file_url_invalid', 'the file URL’s signature does not verify')
  if (expires * 1000 <= deps.now().getTime())
    throw rentalError('file_url_expired', 'the file URL has expired')
  const task = await taskById(deps.db, taskId)
  if (!task || !fileIdsOf(task).includes(fileId) || task.engagement_id === null)
    throw rentalError('file_url_invalid', 'the file URL names no file of its task')
  if (['completed', 'failed', 'canceled', 'rejected'].includes(task.state))
    throw rentalError('file_url_expired', `the file URL’s task is ${task.state}`)
  const [file] = await deps.files.ofEngagement(task.org_id, task.engagement_id, [fileId])
  if (!file) throw rentalError('file_not_found', `no file ${fileId}`)
  return { task, file }
}

/** GET /api/files/{id}/content?token=…: what a task's agent reads its files through (no session). */
export function fileHandoffRoutes(app: App, deps: TaskDeps) {
  app.get(
    '/api/files/:id/content',
    {
      schema: {
        summary:
          'A task’s file, for its agent: the signed, short-lived URL of the A2A file part (no session)',
        description:
          'The token binds the file, the task and an expiry (HMAC-SHA256, RENTAL_FILE_URL_TTL_S): 403 `file_url_invalid` for a tampered or malformed one, 403 `file_url_expired` past the expiry or once the task ended; 404 for a file deleted since, or not of the task’s engagement. Each read is a `file.handed` event.',
        tags: ['files'],
        params: Type.Object({ id: Id }),
        querystring: Type.Object(
          { token: Type.String({ minLength: 1, maxLength: 300 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request, reply) => {
      const { task, file } = await handedFile(deps, request.params.id, request.query.token)
      await inTransaction(deps.db, (trx) =>
        deps.events.record(trx, {
          orgId: task.org_id,
          type: 'file.handed',
          subjects: { file_id: file.id, task_id: task.id, engagement_id: file.engagement_id },
          actor: { type: 'agent', id: task.agent_did, ip: request.ip, requestId: request.id },
          data: { sha256: `sha256:${file.sha256}`, size_bytes: Number(file.size_bytes) },
        }),
      )
      // opened after the event's transaction: the stream reads the chunks from the pool
      const { row, stream } = await deps.files.open(task.org_id, file.id)
      return reply
        .type(row.content_type)
        .header('content-length', String(row.size_bytes))
        .header('content-disposition', contentDisposition(row.name!))
        .header('repr-digest', `sha-256=:${Buffer.from(row.sha256!, 'hex').toString('base64')}:`)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .header('referrer-policy', 'no-referrer')
        .send(stream)
    },
  )
}
