import { defineArea } from '../../context.ts'
import { KeyRing } from './crypt.ts'
import { fileRoutes } from './routes.ts'
import type { RentalDb } from '../../db.ts'
import type { Actor } from '../events/index.ts'
import {
  type Caller,
  download,
  eraseFilesOf,
  type FileDeps,
  fileView,
  rewrapDataKeys,
  shredExpired,
} from './service.ts'
import {
  dropStaleUploads,
  type FileRow,
  filesOfEngagement,
  PgFileStore,
  storedOfEngagement,
} from './store.ts'

export { contentDisposition } from './names.ts'
export type { FileRow } from './store.ts'
export type { HoldCheck } from './service.ts'

export interface FileService {
  /** What the files' routes work with. */
  readonly deps: FileDeps
  /** Erasure: every file of the organization crypto-shredded as DELETE does (receipts and events), in `trx`. */
  eraseOrg(trx: RentalDb, caller: Caller): Promise<{ files: number; bytes: number }>
  /** Retention: crypto-shreds in `trx` the organization's files stored before `before` (held engagements skipped); their ids. */
  shredExpired(
    trx: RentalDb,
    orgId: string,
    actor: Actor,
    before: Date,
    skipEngagements: readonly string[],
    limit: number,
  ): Promise<string[]>
  /** The organization's stored files of the engagement among `ids`, as rows (a task's files), in `trx` when given. */
  ofEngagement(orgId: string, engagementId: string, ids: string[], trx?: RentalDb): Promise<FileRow[]>
  /** The stored file's row and its verified plaintext stream (404 `file_not_found` as GET /api/files/{id}). */
  open(orgId: string, id: string): ReturnType<typeof download>
  /** The engagement's stored files as the list shows them (metadata only, no bytes), oldest first (the export). */
  listOf(orgId: string, engagementId: string): Promise<Array<ReturnType<typeof fileView>>>
}

/** Uploads older than this that never completed (an instance stopped mid-upload) are dropped at start. */
const STALE_UPLOAD_MS = 60 * 60 * 1000

/**
 * The data room: an engagement's files, each encrypted at rest under its own data key (AES-256-GCM
 * in 64 KiB chunks) sealed with the service key; streamed in and out; deleted by destroying the
 * key and the bytes. Tables: rental_files, rental_file_chunks (the default FileStore).
 */
export const filesArea = defineArea({
  name: 'files',
  needs: ['engagements', 'events'],
  async mount(_app, ctx, use): Promise<FileService> {
    const keys = new KeyRing(ctx.config.encryptionKey, ctx.config.files.retiredKeys)
    const deps: FileDeps = {
      ctx,
      engagements: use.engagements,
      events: use.events,
      keys,
      files: new PgFileStore(ctx.db),
      limits: { fileBytes: ctx.config.files.maxBytes, orgBytes: ctx.config.files.orgMaxBytes },
      hold: async (trx, orgId, engagementId) => ctx.reactions.one('files.hold')?.(trx, orgId, engagementId),
    }
    await dropStaleUploads(ctx.db, new Date(ctx.now().getTime() - STALE_UPLOAD_MS))
    // after a rotation: data keys sealed under a retired service key move to the current one
    const rewrapped = await rewrapDataKeys(ctx.db, keys)
    if (rewrapped.moved || rewrapped.unknown)
      ctx.log.info(rewrapped, 'files’ data keys sealed again under the current service key')
    return {
      deps,
      eraseOrg: (trx, caller) => eraseFilesOf(deps, trx, caller),
      shredExpired: (trx, orgId, actor, before, skip, limit) =>
        shredExpired(deps, trx, { orgId, actor }, before, skip, limit),
      ofEngagement: (orgId, engagementId, ids, trx) =>
        storedOfEngagement(trx ?? ctx.db, orgId, engagementId, ids),
      open: (orgId, id) => download(deps, orgId, id),
      listOf: async (orgId, engagementId) =>
        (await filesOfEngagement(ctx.db, orgId, engagementId)).map(fileView),
    }
  },
  routes(app, ctx, _use, own) {
    fileRoutes(app, ctx, own.deps)
  },
})
