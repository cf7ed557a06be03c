import { defineArea } from '../../context.ts'
import { KeyRing } from './crypt.ts'
import { fileRoutes } from './routes.ts'
import { type FileDeps, rewrapDataKeys } from './service.ts'
import { dropStaleUploads, PgFileStore } from './store.ts'

export interface FileService {
  /** What the files' routes work with. */
  readonly deps: FileDeps
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
    }
    await dropStaleUploads(ctx.db, new Date(ctx.now().getTime() - STALE_UPLOAD_MS))
    // after a rotation: data keys sealed under a retired service key move to the current one
    const rewrapped = await rewrapDataKeys(ctx.db, keys)
    if (rewrapped.moved || rewrapped.unknown)
      ctx.log.info(rewrapped, 'files’ data keys sealed again under the current service key')
    return { deps }
  },
  routes(app, ctx, _use, own) {
    fileRoutes(app, ctx, own.deps)
  },
})
