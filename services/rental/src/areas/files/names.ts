import { rentalError } from '../../errors.ts'

/** Longest file name kept, in UTF-8 bytes (what common file systems take). */
const MAX_NAME_BYTES = 255

/**
 * A file's name as given, refused (400 `invalid_file_name`) rather than silently changed when it
 * could mislead or escape: path separators (`/`, `\`), C0 and C1 control characters and DEL,
 * Unicode bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F), `.` and `..`,
 * lone surrogates, empty, or longer than 255 bytes. Kept in Unicode NFC.
 */
export function fileNameOf(given: string | undefined): string {
  if (given === undefined || given === '')
    throw rentalError('invalid_file_name', 'the file needs a name: the multipart part’s filename or ?name=')
  const name = given.normalize('NFC')
  // eslint-disable-next-line no-control-regex
  if (/[/\\\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(name))
    throw rentalError(
      'invalid_file_name',
      'the file name may not hold path separators, control or bidirectional characters',
    )
  if (/[\ud800-\udfff]/u.test(name))
    throw rentalError('invalid_file_name', 'the file name is not well-formed Unicode')
  if (name.trim() === '' || name === '.' || name === '..')
    throw rentalError('invalid_file_name', 'the file name is blank, "." or ".."')
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES)
    throw rentalError('invalid_file_name', `the file name is longer than ${MAX_NAME_BYTES} bytes`)
  return name
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const MEDIA_TYPE = new RegExp(
  `^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\x00-\\x1f\\x7f]*"))*$`,
)

/** A media type as RFC 9110 §8.3.1 writes one (type/subtype and parameters), lower-cased type; else 400. */
export function mediaTypeOf(given: string | undefined): string {
  const type = (given ?? '').trim()
  if (type === '' || type.length > 200 || !MEDIA_TYPE.test(type))
    throw rentalError(
      'invalid_content_type',
      'the file needs a media type (type/subtype), at most 200 characters',
    )
  const semi = type.indexOf(';')
  return semi < 0 ? type.toLowerCase() : `${type.slice(0, semi).trim().toLowerCase()}${type.slice(semi)}`
}

/** RFC 8187 attr-char: what `filename*` may carry unencoded. */
const ATTR_CHAR = /[A-Za-z0-9!#$&+.^_`|~-]/

/**
 * `Content-Disposition: attachment` (RFC 6266) naming the file: `filename` with an ASCII stand-in
 * (others and quotes become `_`), and `filename*` (RFC 8187, UTF-8, percent-encoded) when the
 * name is not plain ASCII, which recipients prefer.
 */
export function contentDisposition(name: string): string {
  const ascii = [...name].map((c) => (/^[\x20-\x7e]$/.test(c) && c !== '"' && c !== '\\' ? c : '_')).join('')
  if (ascii === name) return `attachment; filename="${name}"`
  const encoded = [...Buffer.from(name, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b)
      return b < 0x80 && ATTR_CHAR.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`
    })
    .join('')
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`
}
