/**
 * The body of a C2SP tlog-witness `add-checkpoint` request (https://c2sp.org/tlog-witness): an
 * `old <size>` line, at most 63 base64 consistency-proof hashes one per line, an empty line, then
 * the signed checkpoint note.
 */
import { b64Decode, b64Encode } from './base64url.ts'
import type { Hash } from './merkle.ts'

export const MAX_PROOF_LINES = 63
/** The content type of a 409 answer: the witness's latest cosigned size, in decimal, then a newline. */
export const TLOG_SIZE_CONTENT_TYPE = 'text/x.tlog.size'

const DECIMAL = /^(?:0|[1-9][0-9]*)$/

export interface AddCheckpointRequest {
  oldSize: number
  proof: Hash[]
  /** The checkpoint as a signed note, signatures included. */
  note: string
}

export function formatAddCheckpoint({ oldSize, proof, note }: AddCheckpointRequest): string {
  if (!Number.isSafeInteger(oldSize) || oldSize < 0) throw new Error('old size is not a non-negative integer')
  if (proof.length > MAX_PROOF_LINES) throw new Error(`more than ${MAX_PROOF_LINES} proof hashes`)
  return `old ${oldSize}\n${proof.map((h) => `${b64Encode(h)}\n`).join('')}\n${note}`
}

/** Parses the request's framing; the note itself is left to parseNote and openNote. Throws on any deviation. */
export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const blank = body.indexOf('\n\n')
  if (blank < 0) throw new Error('no empty line before the checkpoint')
  const [first, ...hashes] = body.slice(0, blank).split('\n')
  const size = /^old (.*)$/.exec(first ?? '')?.[1]
  if (size === undefined || !DECIMAL.test(size)) throw new Error('the first line is not "old <size>"')
  const oldSize = Number(size)
  if (!Number.isSafeInteger(oldSize)) throw new Error('the old size is too large')
  if (hashes.length > MAX_PROOF_LINES) throw new Error(`more than ${MAX_PROOF_LINES} consistency proof lines`)
  const proof = hashes.map((line, i) => {
    let hash: Uint8Array
    try {
      hash = b64Decode(line)
    } catch {
      throw new Error(`proof line ${i + 1} is not base64`)
    }
    if (hash.length !== 32) throw new Error(`proof line ${i + 1} is not a 32-byte hash`)
    return hash
  })
  const note = body.slice(blank + 2)
  if (note === '') throw new Error('no checkpoint after the empty line')
  return { oldSize, proof, note }
}

export function formatTlogSize(size: number): string {
  return `${size}\n`
}

export function parseTlogSize(body: string): number {
  const match = /^(0|[1-9][0-9]*)\n$/.exec(body)
  const size = Number(match?.[1])
  if (!match || !Number.isSafeInteger(size)) throw new Error(`not a ${TLOG_SIZE_CONTENT_TYPE} body`)
  return size
}
