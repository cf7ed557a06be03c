import { type App, Lang as Language } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { inTransaction } from '../../db.ts'
import { CATALOGUES, type Lang } from '../public/index.ts'
import { actorOfRequest } from '../events/index.ts'
import type { OrgRouteDeps } from './routes.ts'
import { setLocaleIfChanged } from './store.ts'
import { fromAcceptLanguage, membershipOf, route } from '../../http/index.ts'

const LangSchema = Language()
const Locale = Type.Object({
  locale: LangSchema,
  dir: Type.Union([Type.Literal('ltr'), Type.Literal('rtl')]),
  chosen: Type.Union([LangSchema, Type.Null()]),
  source: Type.Union([Type.Literal('member'), Type.Literal('accept-language'), Type.Literal('default')]),
})

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
