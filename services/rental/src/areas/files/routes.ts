import type { Readable } from 'node:stream'
import multipart from '@fastify/multipart'
import { type App, pageOf, pageQuery } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { RentalContext } from '../../context.ts'
import { rentalError } from '../../errors.ts'
import { actorOfRequest } from '../events/index.ts'
import { contentDisposition } from './names.ts'
import {
  type Caller,
  deleteFile,
  download,
  type FileDeps,
  fileList,
  type Incoming,
  upload,
} from './service.ts'
import { Id, orgOf, Params, route } from '../../http/index.ts'

const File = Type.Object({
  id: Type.String(),
  engagement_id: Type.String(),
  name: Type.String(),
  content_type: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String({ description: 'sha256:<hex> of the plaintext' }),
  created_at: Type.String(),
  url: Type.String({ description: 'where to download it (GET, the session)' }),
})

const callerOf = (request: FastifyRequest): Caller => ({
  orgId: orgOf(request),
  actor: actorOfRequest(request),
})

/** Multipart fields besides the file that an upload may carry (none are read: the name is the part's). */
const MULTIPART_LIMITS = { files: 1, fields: 10, fieldSize: 1024, parts: 12, headerPairs: 100 }

/**
 * The body of an upload: a `multipart/form-data` form's first file part (its filename and type),
 * or any other body as the file's bytes with its Content-Type (the name in `?name=`). Neither is
 * buffered: the part's or the request's stream is read as the file is encrypted.
 */
async function incomingOf(request: FastifyRequest, limit: number, name?: string): Promise<Incoming> {
  if (request.isMultipart()) {
    let part: Awaited<ReturnType<FastifyRequest['file']>>
    try {
      // busboy cuts the part one byte past the limit (the service refuses it with 413); the
      // filename is kept whole so that a path in it is refused, not quietly cut to its last segment
      part = await request.file({
        limits: { ...MULTIPART_LIMITS, fileSize: limit + 1 },
        throwFileSizeLimit: false,
        preservePath: true,
      })
    } catch {
      throw rentalError('upload_incomplete', 'the multipart body is malformed')
    }
    if (!part) throw rentalError('upload_incomplete', 'the multipart body has no file part')
    return { name: name ?? part.filename, contentType: part.mimetype, body: drained(part.file) }
  }
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) {
    // refused before a byte is stored; the rest is read and dropped, so the client gets the answer
    request.raw.resume()
    throw rentalError('payload_too_large', `the body is ${declared} bytes: at most ${limit} may be stored`)
  }
  return { name, contentType: request.headers['content-type'], body: drained(request.raw) }
}

/**
 * The stream's bytes; when the reader stops early (a refusal), the rest is read and dropped rather
 * than the stream destroyed, so the client finishes sending and reads the answer (a multipart
 * file part ends one byte past the limit: busboy cuts it).
 */
async function* drained(stream: Readable) {
  try {
    for await (const piece of stream.iterator({ destroyOnReturn: false })) yield piece as Buffer
  } finally {
    if (!stream.readableEnded && !stream.destroyed) stream.resume()
  }
}

export function fileRoutes(app: App, ctx: RentalContext, deps: FileDeps) {
  const tags = ['files']
  // the upload route reads its own body: multipart through @fastify/multipart, anything else raw
  app.register(async (scoped) => {
    const upload$ = scoped as unknown as App
    upload$.removeAllContentTypeParsers()
    await upload$.register(multipart, { limits: MULTIPART_LIMITS })
    upload$.addContentTypeParser('*', (_request, _payload, done) => done(null))
    upload$.post(
      '/api/engagements/:id/files',
      {
        ...route.csrf('files:write'),
        schema: {
          summary:
            'Stores a file with the engagement, encrypted at rest: a multipart/form-data form’s file part, or a raw body with its Content-Type and ?name=',
          tags,
          params: Params,
          querystring: Type.Object(
            { name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) },
            { additionalProperties: false },
          ),
          response: { 201: File },
        },
      },
      async (request, reply) => {
        const stored = await upload(deps, callerOf(request), request.params.id, (limit) =>
          incomingOf(request, limit, request.query.name),
        )
        return reply.code(201).header('location', stored.url).send(stored)
      },
    )
  })
  app.get(
    '/api/engagements/:id/files',
    {
      ...route.session('files:read'),
      schema: {
        summary: 'The engagement’s files, newest first (names, types, sizes and hashes; not their bytes)',
        tags,
        params: Params,
        querystring: pageQuery(),
        response: {
          200: Type.Object({
            files: Type.Array(File),
            total: Type.Integer(),
            limit: Type.Integer(),
            offset: Type.Integer(),
          }),
        },
      },
    },
    async (request) => fileList(deps, orgOf(request), request.params.id, pageOf(request.query)),
  )
  app.get(
    '/api/files/:id',
    {
      ...route.session('files:read'),
      schema: {
        summary:
          'Downloads the file: decrypted as it streams, every chunk’s tag checked before it is sent (Content-Disposition: attachment)',
        tags,
        params: Type.Object({ id: Id }),
      },
    },
    async (request, reply) => {
      const { row, stream } = await download(deps, orgOf(request), request.params.id)
      return reply
        .type(row.content_type)
        .header('content-length', String(row.size_bytes))
        .header('content-disposition', contentDisposition(row.name!))
        .header('repr-digest', `sha-256=:${Buffer.from(row.sha256!, 'hex').toString('base64')}:`)
        .header('x-content-type-options', 'nosniff')
        .header('content-security-policy', "default-src 'none'; sandbox")
        .header('cache-control', 'private, no-store')
        .send(stream)
    },
  )
  app.delete(
    '/api/files/:id',
    {
      ...route.csrf('files:write'),
      schema: {
        summary:
          'Deletes the file: its bytes and its sealed data key (crypto-shredding), with a file.deleted receipt',
        tags,
        params: Type.Object({ id: Id }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await deleteFile(deps, callerOf(request), request.params.id)
      return reply.code(204).send(null)
    },
  )
}
