/**
 * Signed notes (https://c2sp.org/signed-note), compatible with golang.org/x/mod/sumdb/note: the text, a
 * blank line, then lines `— <key name> <base64(key ID || signature)>`. Keys travel as Go's strings:
 * verifier `<name>+<hex key ID>+<base64(type || public key)>`, signer `PRIVATE+KEY+<name>+<hex>+<base64(type || seed)>`.
 */
import { createHash } from 'node:crypto'
import { b64Decode, b64Encode } from './base64url.ts'
import { ed25519FromSeed, generateEd25519, signEd25519, verifyEd25519 } from './ed25519.ts'

export interface NoteSigner {
  name: string
  keyId: number
  sign(message: Uint8Array): Uint8Array
}

export interface NoteVerifier {
  name: string
  keyId: number
  verify(message: Uint8Array, signature: Uint8Array): boolean
}

/** A signature line: `signature` is what follows the 4-byte key ID; `line` is the line without its newline. */
export interface NoteSignature {
  name: string
  keyId: number
  signature: Uint8Array
  line: string
}

/** Signature type byte of plain Ed25519 note signatures. */
export const ED25519_TYPE = 0x01

// As golang.org/x/mod/sumdb/note; the spec requires accepting at least 16.
const MAX_SIGNATURES = 100
const SIGNATURE_PREFIX = '\u2014 '
const WHITE_SPACE = /\p{White_Space}/u
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const utf8 = new TextEncoder()
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

const malformed = (why: string) => new Error(`malformed note: ${why}`)
const hex8 = (keyId: number) => keyId.toString(16).padStart(8, '0')
const keyLabel = (name: string, keyId: number) => `${name}+${hex8(keyId)}`

/** Why `text` cannot be part of a note (not UTF-8, or an ASCII control character other than newline), or undefined. */
export function noteTextProblem(text: string): string | undefined {
  if (LONE_SURROGATE.test(text)) return 'not valid UTF-8'
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x20 && c !== 0x0a) return `control character U+${c.toString(16).padStart(4, '0')} at offset ${i}`
  }
  return undefined
}

/** Key names are non-empty, without Unicode spaces, plus signs or control characters. */
export function isValidKeyName(name: string): boolean {
  return name !== '' && !WHITE_SPACE.test(name) && !name.includes('+') && noteTextProblem(name) === undefined
}

export function keyIdOf(name: string, typeAndKey: Uint8Array): number {
  const digest = createHash('sha256').update(`${name}\n`).update(typeAndKey).digest()
  return digest.readUInt32BE(0)
}

/** Splits at the first `parts - 1` plus signs: names cannot hold one, base64 can. */
function splitKey(key: string, parts: number): string[] {
  const out: string[] = []
  let rest = key
  for (let i = 1; i < parts; i++) {
    const at = rest.indexOf('+')
    if (at < 0) return []
    out.push(rest.slice(0, at))
    rest = rest.slice(at + 1)
  }
  return [...out, rest]
}

function decodeKeyParts(
  name: string | undefined,
  hex: string | undefined,
  b64: string | undefined,
  what: string,
) {
  if (name === undefined || hex === undefined || b64 === undefined) throw new Error(`malformed ${what}`)
  if (!isValidKeyName(name)) throw new Error(`malformed ${what}: invalid key name`)
  if (!/^[0-9a-fA-F]{8}$/.test(hex)) throw new Error(`malformed ${what}: key ID is not 8 hex digits`)
  let typeAndKey: Uint8Array
  try {
    typeAndKey = b64Decode(b64)
  } catch {
    throw new Error(`malformed ${what}: key is not canonical base64`)
  }
  return { name, keyId: parseInt(hex, 16), typeAndKey }
}

function checkEd25519Type(typeAndKey: Uint8Array, type: number, what: string): Uint8Array {
  if (typeAndKey[0] !== type) {
    const hex2 = (b: number) => `0x${b.toString(16).padStart(2, '0')}`
    throw new Error(`unsupported ${what}: signature type ${hex2(typeAndKey[0] ?? 0)}, want ${hex2(type)}`)
  }
  if (typeAndKey.length !== 33) throw new Error(`malformed ${what}: an Ed25519 key is 32 bytes`)
  return typeAndKey.slice(1)
}

/** Encodes an Ed25519 key pair (random unless `seed` is given) as Go's signer and verifier key strings. */
export function encodeEd25519Keys(name: string, type: number, seed?: Uint8Array) {
  if (!isValidKeyName(name)) throw new Error(`invalid key name ${JSON.stringify(name)}`)
  const pair = seed === undefined ? generateEd25519() : ed25519FromSeed(seed)
  const keyId = keyIdOf(name, new Uint8Array([type, ...pair.publicKey]))
  return {
    signerKey: `PRIVATE+KEY+${keyLabel(name, keyId)}+${b64Encode(new Uint8Array([type, ...pair.seed]))}`,
    verifierKey: `${keyLabel(name, keyId)}+${b64Encode(new Uint8Array([type, ...pair.publicKey]))}`,
  }
}

export function decodeEd25519SignerKey(signerKey: string, type: number) {
  const [private1, private2, name, hex, b64] = splitKey(signerKey, 5)
  if (private1 !== 'PRIVATE' || private2 !== 'KEY') throw new Error('malformed signer key')
  const parts = decodeKeyParts(name, hex, b64, 'signer key')
  const { seed, publicKey } = ed25519FromSeed(checkEd25519Type(parts.typeAndKey, type, 'signer key'))
  if (keyIdOf(parts.name, new Uint8Array([type, ...publicKey])) !== parts.keyId) {
    throw new Error('invalid signer key: key ID does not match the name and key')
  }
  return { name: parts.name, keyId: parts.keyId, seed, publicKey }
}

export function decodeEd25519VerifierKey(verifierKey: string, type: number) {
  const [name, hex, b64] = splitKey(verifierKey, 3)
  const parts = decodeKeyParts(name, hex, b64, 'verifier key')
  const publicKey = checkEd25519Type(parts.typeAndKey, type, 'verifier key')
  if (keyIdOf(parts.name, parts.typeAndKey) !== parts.keyId) {
    throw new Error('invalid verifier key: key ID does not match the name and key')
  }
  return { name: parts.name, keyId: parts.keyId, publicKey }
}

export function generateNoteKey(name: string, seed?: Uint8Array): { signerKey: string; verifierKey: string } {
  return encodeEd25519Keys(name, ED25519_TYPE, seed)
}

export function signerFromKey(signerKey: string): NoteSigner {
  const { name, keyId, seed } = decodeEd25519SignerKey(signerKey, ED25519_TYPE)
  return { name, keyId, sign: (message) => signEd25519(seed, message) }
}

export function verifierFromKey(verifierKey: string): NoteVerifier {
  const { name, keyId, publicKey } = decodeEd25519VerifierKey(verifierKey, ED25519_TYPE)
  return { name, keyId, verify: (message, signature) => verifyEd25519(publicKey, message, signature) }
}

function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(SIGNATURE_PREFIX)) {
    throw malformed(
      `signature line does not start with an em dash and a space: ${JSON.stringify(line.slice(0, 40))}`,
    )
  }
  const rest = line.slice(SIGNATURE_PREFIX.length)
  const space = rest.indexOf(' ')
  if (space < 0) throw malformed('signature line has no space between key name and signature')
  const name = rest.slice(0, space)
  if (!isValidKeyName(name)) throw malformed(`invalid key name ${JSON.stringify(name)}`)
  let bytes: Uint8Array
  try {
    bytes = b64Decode(rest.slice(space + 1))
  } catch {
    throw malformed(`signature of ${name} is not canonical standard base64`)
  }
  if (bytes.length < 5) throw malformed(`signature of ${name} is shorter than a key ID and one byte`)
  const keyId = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0)
  return { name, keyId, signature: bytes.slice(4), line }
}

function toText(note: string | Uint8Array): string {
  if (typeof note === 'string') return note
  try {
    return strictUtf8.decode(note)
  } catch {
    throw malformed('not valid UTF-8')
  }
}

/** Splits a note into its text and signatures, checking syntax only. Bytes are decoded as strict UTF-8. */
export function parseNote(note: string | Uint8Array): { text: string; signatures: NoteSignature[] } {
  const all = toText(note)
  const problem = noteTextProblem(all)
  if (problem !== undefined) throw malformed(problem)
  const split = all.lastIndexOf('\n\n')
  if (split < 0) throw malformed('no blank line between text and signatures')
  const block = all.slice(split + 2)
  if (block === '') throw malformed('no signature lines after the blank line')
  if (!block.endsWith('\n')) throw malformed('the last signature line does not end in a newline')
  const lines = block.slice(0, -1).split('\n')
  if (lines.length > MAX_SIGNATURES) throw malformed(`more than ${MAX_SIGNATURES} signatures`)
  return { text: all.slice(0, split + 1), signatures: lines.map(parseSignatureLine) }
}

/**
 * Parses and verifies a note. A signature whose name and key ID match a verifier must verify, or the note is
 * rejected; signatures of other keys are returned as unverified; at least one signature must verify.
 */
export function openNote(
  note: string | Uint8Array,
  verifiers: NoteVerifier[],
): { text: string; verified: NoteSignature[]; unverified: NoteSignature[] } {
  const { text, signatures } = parseNote(note)
  const message = utf8.encode(text)
  const verified: NoteSignature[] = []
  const unverified: NoteSignature[] = []
  const seen = new Set<string>()
  for (const sig of signatures) {
    const label = keyLabel(sig.name, sig.keyId)
    const matches = verifiers.filter((v) => v.name === sig.name && v.keyId === sig.keyId)
    if (matches.length === 0) {
      if (!unverified.some((u) => u.line === sig.line)) unverified.push(sig)
      continue
    }
    if (matches.length > 1)
      throw new Error(`ambiguous key ${label}: several verifiers have this name and key ID`)
    if (!matches[0]!.verify(message, sig.signature)) throw new Error(`invalid signature for key ${label}`)
    if (!seen.has(label)) verified.push(sig)
    seen.add(label)
  }
  if (verified.length === 0) throw new Error('note has no verifiable signatures')
  return { text, verified, unverified }
}

/**
 * Signs `text` (which must end in a newline) and returns the whole note. Existing signature lines (as in
 * `NoteSignature.line`) come first, except those of a key that signs again now, as in Go's note.Sign.
 */
export function signNote(text: string, signers: NoteSigner[], existingSignatures: string[] = []): string {
  if (!text.endsWith('\n')) throw malformed('the text does not end in a newline')
  const problem = noteTextProblem(text)
  if (problem !== undefined) throw malformed(problem)
  const message = utf8.encode(text)
  const signing = new Set(signers.map((s) => keyLabel(s.name, s.keyId)))
  const kept = existingSignatures
    .map((line) => {
      const lineProblem = line.includes('\n') ? 'a signature line holds a newline' : noteTextProblem(line)
      if (lineProblem !== undefined) throw malformed(lineProblem)
      return parseSignatureLine(line)
    })
    .filter((sig) => !signing.has(keyLabel(sig.name, sig.keyId)))
    .map((sig) => sig.line)
  const fresh = signers.map((s) => {
    if (!isValidKeyName(s.name)) throw new Error(`invalid signer: key name ${JSON.stringify(s.name)}`)
    if (!Number.isInteger(s.keyId) || s.keyId < 0 || s.keyId > 0xffffffff) {
      throw new Error(`invalid signer: key ID of ${s.name} is not a uint32`)
    }
    const signature = s.sign(message)
    if (signature.length === 0) throw new Error(`invalid signer: ${s.name} returned an empty signature`)
    const bytes = new Uint8Array(4 + signature.length)
    new DataView(bytes.buffer).setUint32(0, s.keyId)
    bytes.set(signature, 4)
    return `${SIGNATURE_PREFIX}${s.name} ${b64Encode(bytes)}`
  })
  const lines = [...kept, ...fresh]
  if (lines.length === 0) throw new Error('a note needs at least one signature')
  if (lines.length > MAX_SIGNATURES) throw malformed(`more than ${MAX_SIGNATURES} signatures`)
  return `${text}\n${lines.map((line) => `${line}\n`).join('')}`
}
