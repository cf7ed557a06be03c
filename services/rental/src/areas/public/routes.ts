import { type App, prefersJson, sendHome } from '@svc/kit'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import type { CatalogueService } from '../catalogue/index.ts'
import type { MarketService } from '../market/index.ts'
import type { IncidentService } from '../incidents/index.ts'
import { CATALOGUES, isLang, type Lang, LANGUAGES } from './i18n.ts'
import { landingPage, marketPage, PAGE_HEADERS, statusPage } from './pages.ts'

export interface PublicDeps {
  catalogue: CatalogueService
  market: Pick<MarketService, 'publicSearch'>
  incidents: Pick<IncidentService, 'openPublic'>
  version: string
  /** Public base URLs, for the root's JSON answer (`Accept: application/json`). */
  urls?: { rental: string; idp: string; ledger: string }
  /** Whether the console's idp client is linked (sign-in possible). */
  idpLinked: () => boolean
  dependencies: () => Promise<Record<string, { url: string; reachable: boolean; status?: number }>>
  /** Whether the request comes from a signed-in browser (its pages then link to the console). */
  signedIn?: (request: FastifyRequest) => Promise<boolean>
}

const tags = ['public']
const PageQuery = Type.Object({ lang: Type.Optional(Type.String({ maxLength: 10 })) })
const langOf = (query: { lang?: string | undefined }): Lang => (isLang(query.lang) ? query.lang : 'en')

const Catalogue = Type.Object({
  lang: Type.String(),
  dir: Type.Union([Type.Literal('ltr'), Type.Literal('rtl')]),
  messages: Type.Record(Type.String(), Type.String()),
})
const Dependency = Type.Object({
  url: Type.String(),
  reachable: Type.Boolean(),
  status: Type.Optional(Type.Integer()),
})
const Status = Type.Object({
  service: Type.Literal('rental'),
  version: Type.String(),
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
  sign_in: Type.Union([Type.Literal('available'), Type.Literal('pending')]),
  dependencies: Type.Record(Type.String(), Dependency),
  incidents: Type.Array(
    Type.Object({
      kind: Type.Union([Type.Literal('platform'), Type.Literal('agent')]),
      agent_did: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      severity: Type.String(),
      summary: Type.String(),
      impact: Type.Optional(Type.String()),
      since: Type.String(),
    }),
    {
      description: 'open incidents: the platform’s, and agents’ (severity and summary only, no client named)',
    },
  ),
})

/** The rental's root in JSON: the same places the landing page links to. */
const home = ({ version, urls }: PublicDeps) => ({
  service: 'rental',
  version,
  description: 'The agent rental service: hire agents for jobs, sign SLAs and escrows, run tasks, pay once.',
  links: [
    { rel: 'docs', title: 'API reference', href: '/docs' },
    { rel: 'console', title: 'The console', href: '/console' },
    { rel: 'market', title: 'The market', href: '/market' },
    { rel: 'status', title: 'Status', href: '/status' },
    { rel: 'sign_in', title: 'Sign in', href: '/auth/login' },
    { rel: 'discovery', title: 'The idp’s discovery', href: `${urls!.idp}/.well-known/openid-configuration` },
    { rel: 'ledger', title: 'The receipts ledger', href: urls!.ledger },
  ],
})

export function publicRoutes(app: App, deps: PublicDeps) {
  const signedIn = async (request: FastifyRequest) => (await deps.signedIn?.(request)) ?? false
  const status = async () => {
    const dependencies = await deps.dependencies()
    const ok = Object.values(dependencies).every((d) => d.reachable) && deps.idpLinked()
    return {
      service: 'rental' as const,
      version: deps.version,
      status: ok ? ('ok' as const) : ('degraded' as const),
      sign_in: deps.idpLinked() ? ('available' as const) : ('pending' as const),
      dependencies,
      incidents: await deps.incidents.openPublic(),
    }
  }

  app.get(
    '/',
    {
      schema: {
        summary: 'Landing page (or, for `Accept: application/json`, what the service is and where to go)',
        tags,
        querystring: PageQuery,
      },
    },
    async (request, reply) => {
      if (deps.urls && prefersJson(request.headers.accept))
        return sendHome(request, reply, home(deps), deps.urls.rental)
      return reply
        .headers({ ...PAGE_HEADERS, 'cache-control': 'no-store', vary: 'Accept' })
        .send(landingPage(langOf(request.query), await signedIn(request)))
    },
  )
  app.get(
    '/market',
    {
      schema: {
        summary:
          'The public market: the published listings (searched with `q`), the catalogue’s jobs, prices and agents',
        tags,
        querystring: Type.Object({
          ...PageQuery.properties,
          q: Type.Optional(Type.String({ maxLength: 200 })),
        }),
      },
    },
    async (request, reply) => {
      const lang = langOf(request.query)
      const q = request.query.q ?? ''
      const listings = await deps.market.publicSearch(q, lang, 50)
      return reply
        .headers({ ...PAGE_HEADERS, 'cache-control': 'no-store' })
        .send(marketPage(lang, await deps.catalogue.catalogue(lang), q, listings, await signedIn(request)))
    },
  )
  app.get(
    '/status',
    {
      schema: {
        summary: 'Status: the service, its version, and whether the idp, ledger and agents are reachable',
        tags,
        response: { 200: Status },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store')
      return status()
    },
  )
  app.get(
    '/status.html',
    { schema: { summary: 'The status page', tags, querystring: PageQuery } },
    async (request, reply) =>
      reply.headers(PAGE_HEADERS).send(statusPage(langOf(request.query), await status())),
  )
  app.get(
    '/api/i18n/:lang',
    {
      schema: {
        summary: `The message catalogue of a language (${LANGUAGES.join(', ')}); another is 404`,
        tags,
        params: Type.Object({ lang: Type.String({ maxLength: 20 }) }),
        response: { 200: Catalogue },
      },
    },
    async (request, reply) => {
      const { lang } = request.params
      if (!isLang(lang))
        throw rentalError(
          'unknown_language',
          `no catalogue for ${JSON.stringify(lang)}: ${LANGUAGES.join(', ')}`,
        )
      reply.header('cache-control', 'public, max-age=300')
      return CATALOGUES[lang]
    },
  )
  const script = `window.SVC_I18N = ${JSON.stringify(CATALOGUES).replace(/</g, '\\u003c')};\n`
  app.get(
    '/api/i18n.js',
    { schema: { summary: 'Every catalogue as a script (window.SVC_I18N)', tags } },
    async (_request, reply) =>
      reply
        .headers({
          'content-type': 'text/javascript; charset=utf-8',
          'cache-control': 'public, max-age=300',
          'x-content-type-options': 'nosniff',
        })
        .send(script),
  )
}
