/** The redirect URI with parameters added to its query (RFC 6749 §4.1.2), keeping the query it had. */
export function withParams(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.toString()
}
