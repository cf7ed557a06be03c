/** Strict base64url (RFC 4648 §5) without padding, and standard base64 (§4) with padding. */
const URL_ALPHABET = /^[A-Za-z0-9_-]*$/
const STD_ALPHABET = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

export function b64uEncode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')
}

/** Decodes base64url without padding; anything else (padding, other characters, a dangling char) throws. */
export function b64uDecode(text: string): Uint8Array {
  if (!URL_ALPHABET.test(text) || text.length % 4 === 1) throw new Error('invalid base64url')
  const bytes = new Uint8Array(Buffer.from(text, 'base64url'))
  if (b64uEncode(bytes) !== text) throw new Error('non-canonical base64url')
  return bytes
}

export function b64Encode(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
}

/** Decodes canonical padded base64; anything else throws. */
export function b64Decode(text: string): Uint8Array {
  if (!STD_ALPHABET.test(text)) throw new Error('invalid base64')
  const bytes = new Uint8Array(Buffer.from(text, 'base64'))
  if (b64Encode(bytes) !== text) throw new Error('non-canonical base64')
  return bytes
}
