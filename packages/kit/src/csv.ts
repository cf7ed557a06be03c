/**
 * One CSV field (RFC 4180): quoted when it holds a comma, a quote, CR or LF, quotes doubled. A
 * field that a spreadsheet would read as a formula (it starts with `=`, `+`, `-`, `@`, a tab or a
 * carriage return) is prefixed with `'` first, as OWASP's "CSV Injection" page advises: text from
 * an agent, or a negative amount, must not run in the reader's spreadsheet.
 */
export function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** One CSV record, CRLF-terminated. */
export const csvLine = (fields: string[]) => `${fields.map(csvField).join(',')}\r\n`
