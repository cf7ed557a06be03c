/**
 * Transparency log checkpoints (https://c2sp.org/tlog-checkpoint): the text of a signed note made of the
 * origin line, the decimal tree size, the base64 RFC 6962 root hash, then optional non-empty extension lines.
 */
import { b64Decode, b64Encode } from './base64url.ts'
import { noteTextProblem } from './note.ts'

export interface Checkpoint {
  origin: string
  size: number
  rootHash: Uint8Array
  extensions: string[]
}

const HASH_LENGTH = 32
const DECIMAL = /^(?:0|[1-9][0-9]*)$/

const malformed = (why: string) => new Error(`malformed checkpoint: ${why}`)

function checkLine(what: string, line: string): void {
  if (line === '') throw malformed(`${what} is empty`)
  const problem = line.includes('\n') ? 'holds a newline' : noteTextProblem(line)
  if (problem !== undefined) throw malformed(`${what}: ${problem}`)
}

/** The checkpoint as note text, ending in a newline. */
export function formatCheckpoint(c: Checkpoint): string {
  checkLine('origin line', c.origin)
  if (!Number.isSafeInteger(c.size) || c.size < 0)
    throw malformed('tree size is not a non-negative safe integer')
  if (c.rootHash.length !== HASH_LENGTH) throw malformed(`root hash is not ${HASH_LENGTH} bytes`)
  for (const line of c.extensions) checkLine('extension line', line)
  return [c.origin, String(c.size), b64Encode(c.rootHash), ...c.extensions].map((l) => `${l}\n`).join('')
}

/** Parses the text of a checkpoint note (not the signatures: see openNote). */
export function parseCheckpoint(text: string): Checkpoint {
  const problem = noteTextProblem(text)
  if (problem !== undefined) throw malformed(problem)
  if (!text.endsWith('\n')) throw malformed('the text does not end in a newline')
  const [origin, size, hash, ...extensions] = text.slice(0, -1).split('\n')
  if (origin === undefined || size === undefined || hash === undefined) {
    throw malformed('needs an origin, a tree size and a root hash line')
  }
  if (origin === '') throw malformed('origin line is empty')
  if (!DECIMAL.test(size))
    throw malformed(`tree size ${JSON.stringify(size)} is not a decimal without leading zeros`)
  const n = Number(size)
  if (!Number.isSafeInteger(n)) throw malformed(`tree size ${size} is too large`)
  let rootHash: Uint8Array
  try {
    rootHash = b64Decode(hash)
  } catch {
    throw malformed('root hash is not canonical standard base64')
  }
  if (rootHash.length !== HASH_LENGTH) throw malformed(`root hash is not ${HASH_LENGTH} bytes`)
  if (extensions.includes('')) throw malformed('an extension line is empty')
  return { origin, size: n, rootHash, extensions }
}
