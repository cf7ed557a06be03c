import type { App } from '@svc/kit'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { rentalError } from '../../errors.ts'
import type { ConsoleSessions } from '../auth/hooks.ts'
import { consoleAssets, type Served, vendorModules } from './files.ts'
import { CONSOLE_HEADERS, consolePage, DESIGN_CSS_PATH, signInPage } from './page.ts'
import { designAssets, sendDesignAsset } from '@svc/kit/design/assets'

const tags = ['console']
/** The console's language as the browser code keeps it (console/i18n.js), for the signed-out redirect. */
const LANG_COOKIE = 'console_lang'
const FileParams = Type.Object({ file: Type.String({ minLength: 1, maxLength: 60 }) })

/** A served file, `304` when the browser has it (ETag), revalidated at every use. */
function send(request: FastifyRequest, reply: FastifyReply, file: Served | undefined, what: string) {
  if (!file) throw rentalError('not_found', `no console ${what} by that name`)
  reply.headers({ ...CONSOLE_HEADERS, etag: file.etag, 'cache-control': 'no-cache' })
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send()
  return reply.type(file.type).send(file.body)
}

/**
 * `GET /console`: the web console's page (a signed-out visitor is sent to sign in first), and its
 * files: `/console/assets/{file}` (the browser code in `services/rental/console/`) and
 * `/console/vendor/{file}` (Preact, htm, canonicalize, @scure/base from node_modules).
 */
export function webConsoleRoutes(app: App, sessions: ConsoleSessions) {
  const assets = consoleAssets()
  const vendor = vendorModules()
  app.get(
    '/console',
    {
      schema: {
        summary:
          'The web console (signed out: 302 to /auth/login, asking the idp for the console’s language: lang, else the console_lang cookie; a browser, Accept: text/html, gets a page that keeps the fragment’s screen and goes there)',
        tags,
        querystring: Type.Object({ lang: Type.Optional(Type.String({ maxLength: 10 })) }),
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      if (!(await sessions.find(request))) {
        const lang = [request.query.lang, request.cookies[LANG_COOKIE]].find((l) => l === 'en' || l === 'ar')
        const signIn = lang ? `/auth/login?ui_locales=${lang}` : '/auth/login'
        // a browser gets a page that keeps the screen its fragment names (the server never sees it)
        if (request.headers.accept?.includes('text/html'))
          return reply
            .headers({ ...CONSOLE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
            .send(signInPage(lang as 'en' | 'ar' | undefined, signIn))
        return reply.redirect(signIn, 302)
      }
      return reply
        .headers({ ...CONSOLE_HEADERS, 'content-type': 'text/html; charset=utf-8' })
        .send(consolePage(request.query.lang === 'ar' ? 'ar' : 'en'))
    },
  )
  const design = designAssets()
  const VersionQuery = Type.Object({ v: Type.Optional(Type.String({ maxLength: 40 })) })
  app.get(
    DESIGN_CSS_PATH,
    {
      schema: {
        summary: 'The style sheet shared with the idp’s pages (packages/kit design)',
        tags,
        querystring: VersionQuery,
      },
    },
    async (request, reply) => sendDesignAsset(request, reply, design.css),
  )
  for (const path of ['/favicon.svg', '/favicon.ico'])
    app.get(
      path,
      { schema: { summary: 'The favicon (SVG)', tags, querystring: VersionQuery } },
      async (request, reply) => sendDesignAsset(request, reply, design.favicon),
    )
  app.get(
    '/console/assets/:file',
    { schema: { summary: 'A file of the console’s browser code', tags, params: FileParams } },
    async (request, reply) => send(request, reply, assets.get(request.params.file), 'file'),
  )
  app.get(
    '/console/vendor/:file',
    {
      schema: {
        summary: 'A library of the console as an ES module (Preact, htm, canonicalize, @scure/base)',
        tags,
        params: FileParams,
      },
    },
    async (request, reply) => send(request, reply, vendor.get(request.params.file), 'library'),
  )
}
