import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { repoRoot } from '../paths.ts'

/** A file every service serves the same: its bytes, type, strong ETag and a short version of it. */
export interface DesignAsset {
  body: Buffer
  type: string
  etag: string
  /** The first characters of the content's hash: `?v=` of a link that changes with the file. */
  version: string
}

/**
 * This folder: beside this module under tsx; from a production bundle (services/<name>/.build/),
 * the workspace's copy (the image keeps `packages/`).
 */
function designFolder(): string {
  const here = dirname(fileURLToPath(import.meta.url))
  if (existsSync(join(here, 'design.css'))) return here
  return join(repoRoot(), 'packages', 'kit', 'src', 'design')
}

function load(name: string, type: string): DesignAsset {
  const body = readFileSync(join(designFolder(), name))
  const hash = createHash('sha256').update(body).digest('base64url')
  return { body, type, etag: `"${hash.slice(0, 22)}"`, version: hash.slice(0, 10) }
}

let loaded: { css: DesignAsset; favicon: DesignAsset } | undefined

/** The shared style sheet (`design.css`: tokens, buttons, fields, cards, notices) and the favicon, read once. */
export function designAssets() {
  loaded ??= {
    css: load('design.css', 'text/css; charset=utf-8'),
    favicon: load('favicon.svg', 'image/svg+xml'),
  }
  return loaded
}

/** The product's name, as the pages of every service show it. */
export const PRODUCT_NAME = 'svc'

/**
 * Answers with a design asset. A link carrying the current `?v=` is cached for a year (immutable:
 * a new file has a new link); any other request revalidates with the ETag (304 when unchanged).
 */
export function sendDesignAsset(request: FastifyRequest, reply: FastifyReply, asset: DesignAsset) {
  const versioned = (request.query as { v?: unknown } | undefined)?.v === asset.version
  reply.header('etag', asset.etag)
  reply.header(
    'cache-control',
    versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=0, must-revalidate',
  )
  reply.header('x-content-type-options', 'nosniff')
  if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send()
  return reply.type(asset.type).send(asset.body)
}
