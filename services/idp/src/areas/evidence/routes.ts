import type { App } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import type { ActivityService } from '../activity/index.ts'
import { recentEvents, userById } from '../accounts/index.ts'
import { approvalsOf } from '../approvals/index.ts'
import { consentsOf } from '../authorize/index.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { sendMessage } from '../../pages/layout.ts'
import { type Lang, renderEvidence } from './render.ts'

/** The signed-in user's evidence about the account, as Markdown (RFC 7763), in English, Arabic or both. */
export function evidenceRoutes(
  app: App,
  { db, origin, activity }: { db: IdpDb; origin: string; activity: ActivityService },
) {
  const pages = pageHooks({ db, origin })
  app.get(
    '/ui/activity/evidence/:did.md',
    {
      ...pages.signedIn(),
      schema: {
        summary: 'What is kept about the signed-in account, with ledger commitments, as Markdown',
        tags: ['pages'],
        params: Type.Object({ did: Type.String({ maxLength: 200 }) }),
        querystring: Type.Object({
          lang: Type.Union([Type.Literal('en'), Type.Literal('ar'), Type.Literal('both')], { default: 'en' }),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      const user = await userById(db, session.user_id)
      // only the account's own evidence: any other DID is not found
      if (!user?.did || user.did !== request.params.did)
        return sendMessage(reply, 404, 'Evidence', 'There is no such account for you.')
      const langs: Lang[] = request.query.lang === 'both' ? ['en', 'ar'] : [request.query.lang]
      const markdown = renderEvidence(
        {
          did: user.did,
          email: user.email,
          generatedAt: new Date().toISOString(),
          events: await recentEvents(db, user.id),
          consents: await consentsOf(db, user.id),
          approvals: await approvalsOf(db, user.id),
          activity: await activity.of(user.id),
        },
        langs,
      )
      return reply
        .type('text/markdown; charset=utf-8; variant=GFM')
        .header('cache-control', 'no-store')
        .header('content-language', langs.join(', '))
        .header('content-disposition', `inline; filename="account-evidence-${request.query.lang}.md"`)
        .send(markdown)
    },
  )
}
