/** Typographic characters our messages use, and their ASCII stand-ins. */
const ASCII_FOR: Record<string, string> = {
  '‘': "'",
  '’': "'",
  '“': "'",
  '”': "'",
  '–': '-',
  '—': '-',
  '…': '...',
}

/**
 * Human text made fit for a header parameter: printable ASCII only (Node refuses anything else in
 * a header), without `"` and `\`, which RFC 6750 §3 excludes from `error_description`. The full
 * text stays in the body; the header carries this rendering of it.
 */
export function headerText(text: string): string {
  return text
    .replace(/[‘’“”–—…]/g, (c) => ASCII_FOR[c]!)
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/[^\x20-\x7e]/g, '?')
}

/** An RFC 9110 §5.6.4 quoted-string: `"` and `\` escaped, anything outside printable ASCII replaced. */
export const quotedString = (value: string) =>
  `"${value.replace(/[^\x20-\x7e]/g, '?').replace(/["\\]/g, '\\$&')}"`

/**
 * A `WWW-Authenticate` challenge (RFC 9110 §11.6.1, RFC 6750 §3, RFC 9449 §7.1):
 * `Scheme name="value", …`, every value a quoted-string and `error_description` in `headerText`.
 * Every challenge the idp sends is built here, so no message can make Node refuse the header.
 */
export function challenge(scheme: string, params: Record<string, string | undefined>): string {
  const rendered = Object.entries(params)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(
      ([name, value]) => `${name}=${quotedString(name === 'error_description' ? headerText(value) : value)}`,
    )
  return rendered.length ? `${scheme} ${rendered.join(', ')}` : scheme
}
