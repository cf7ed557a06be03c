import type { MoneyLocale } from '@svc/kit'

/** The first of `en` and `ar` that Accept-Language names, by its q-values (RFC 9110 §12.5.4). */
export function fromAcceptLanguage(header: unknown): MoneyLocale | null {
  if (typeof header !== 'string') return null
  const ranked = header
    .slice(0, 1000)
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';')
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined)
      return { lang: tag.trim().toLowerCase().split('-')[0], q: q === undefined ? 1 : Number(q), i }
    })
    .filter((r) => (r.lang === 'en' || r.lang === 'ar') && r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
  return (ranked[0]?.lang as MoneyLocale | undefined) ?? null
}
