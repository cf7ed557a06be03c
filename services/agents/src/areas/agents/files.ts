import { createHash } from 'node:crypto'
import type { Part } from '@a2a-js/sdk'
import { requestFromMessage } from '../../outbound.ts'

/** What the agents may fetch a file part's URL from, and how much of it. */
export interface FileRules {
  /** Bytes one file may hold (AGENTS_FILE_MAX_BYTES). */
  maxBytes: number
  /** Origins file URLs may point at (AGENTS_FILE_ORIGINS); null: any (development and tests). */
  origins: string[] | null
}

/** A file part the agent read: its bytes' hash and size, and its text. */
export interface ReadFile {
  filename: string
  media_type: string
  sha256: string
  size_bytes: number
  text: string
}

const FETCH_TIMEOUT_MS = 10_000
/** At most this many file parts are read per message. */
const MAX_FILES = 20

/** The message's A2A 1.0 file parts given by URL (`{ url, filename, mediaType }`). */
export const urlParts = (parts: Part[]) =>
  parts.flatMap((p) =>
    p.content?.$case === 'url'
      ? [{ url: p.content.value, filename: p.filename, mediaType: p.mediaType, metadata: p.metadata }]
      : [],
  )

/**
 * Fetches each file part's URL (no redirects, bounded in time and size, from an allowed origin)
 * and decodes it as UTF-8 text; a `svc_sha256` in the part's metadata (the rental names each
 * file's hash) must match the bytes read. Any failure throws, naming the file.
 */
export async function readFiles(parts: Part[], rules: FileRules): Promise<ReadFile[]> {
  const files = urlParts(parts)
  if (files.length > MAX_FILES) throw new Error(`at most ${MAX_FILES} files are read per message`)
  const read: ReadFile[] = []
  for (const file of files) {
    const name = file.filename || 'a file'
    let url: URL
    try {
      url = new URL(file.url)
    } catch {
      throw new Error(`the URL of ${name} is malformed`)
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new Error(`the URL of ${name} is not http(s)`)
    if (rules.origins && !rules.origins.includes(url.origin))
      throw new Error(`the URL of ${name} is not from an allowed origin (AGENTS_FILE_ORIGINS)`)
    let res: Awaited<ReturnType<typeof requestFromMessage>>
    try {
      res = await requestFromMessage(url.href, rules.origins, {
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: rules.maxBytes,
      })
    } catch (err) {
      const message = (err as Error).message
      if (/^answered more than/.test(message))
        throw new Error(`${name} is larger than the ${rules.maxBytes} bytes an agent reads`)
      throw new Error(`${name} could not be fetched: ${message}`)
    }
    if (res.status !== 200) throw new Error(`${name} could not be fetched: its URL answered ${res.status}`)
    const bytes = res.bytes
    const sha256 = createHash('sha256').update(bytes).digest('hex')
    const named = (file.metadata as Record<string, unknown> | undefined)?.svc_sha256
    if (typeof named === 'string' && named !== `sha256:${sha256}`)
      throw new Error(`${name} read does not have the hash its part names`)
    let text: string
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      throw new Error(`${name} is not UTF-8 text`)
    }
    read.push({
      filename: file.filename,
      media_type: file.mediaType,
      sha256: `sha256:${sha256}`,
      size_bytes: bytes.length,
      text,
    })
  }
  return read
}
