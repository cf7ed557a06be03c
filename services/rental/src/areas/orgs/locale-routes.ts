import { type App, Lang as Language } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { inTransaction } from '../../db.ts'
import { CATALOGUES, type Lang } from '../public/i18n.ts'
import { actorOfRequest } from '../events/index.ts'
import type { OrgRouteDeps } from './routes.ts'
import { setLocaleIfChanged } from './store.ts'
import { membershipOf, route } from '../../http/index.ts'

const LangSchema = Language()
const Locale = Type.Object({
  locale: LangSchema,
  dir: Type.Union([Type.Literal('ltr'), Type.Literal('rtl')]),
  chosen: Type.Union([LangSchema, Type.Null()]),
  source: Type.Union([Type.Literal('member'), Type.Literal('accept-language'), Type.Literal('default')]),
})

/** The first of `en` and `ar` that Accept-Language names, by its q-values (RFC 9110 §12.5.4). */
export function fromAcceptLanguage(header: unknown): Lang | null {
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
  return (ranked[0]?.lang as Lang | undefined) ?? null
}

const view = (request: FastifyRequest, chosen: Lang | null) => {
  const asked = fromAcceptLanguage(request.headers['accept-language'])
  const locale = chosen ?? asked ?? 'en'
  const source = chosen ? 'member' : asked ? 'accept-language' : 'default'
  return { locale, dir: CATALOGUES[locale].dir, chosen, source } as const
}

/** The member's language: chosen and stored per member, else Accept-Language, else English. */
export function localeRoutes(app: App, deps: OrgRouteDeps) {
  const tags = ['org']
  app.get(
    '/api/locale',
    {
      ...route.session(),
      schema: {
        summary: 'The member’s language: the one chosen, else Accept-Language’s, else English',
        tags,
        response: { 200: Locale },
      },
    },
    async (request) => view(request, membershipOf(request).locale),
  )
  app.post(
    '/api/locale',
    {
      ...route.csrf(),
      schema: {
        summary: 'Chooses the member’s language (en, ar): console, errors and amounts follow it',
        tags,
        body: Type.Object({ locale: LangSchema }, { additionalProperties: false }),
        response: { 200: Locale },
      },
    },
    async (request) => {
      const member = membershipOf(request)
      const locale = request.body.locale
      await inTransaction(deps.db, async (trx) => {
        if (await setLocaleIfChanged(trx, member.orgId, member.memberId, locale))
          await deps.events.record(trx, {
            orgId: member.orgId,
            type: 'member.locale_changed',
            subjects: { member_id: member.memberId },
            actor: actorOfRequest(request),
            data: { locale, previous: member.locale },
          })
      })
      return view(request, locale)
    },
  )
}
