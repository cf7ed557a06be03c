import { type App } from '@svc/kit'
import { Type } from 'typebox'
import type { IdpDb } from '../../db.ts'
import { pageHooks, sessionOf } from '../sessions/index.ts'
import { sendLocalMessage } from '../../pages/layout.ts'
import { endTask } from './store.ts'

/** The user ends a task grant: its next token request is refused, and its tokens stop working. */
export function taskRoutes(app: App, { db, origin }: { db: IdpDb; origin: string }) {
  app.post(
    '/ui/account/tasks/end',
    {
      ...pageHooks({ db, origin }).form('sign in to manage your task grants'),
      schema: {
        summary: 'End one of the signed-in user’s task grants',
        tags: ['pages'],
        body: Type.Object({
          csrf: Type.String({ maxLength: 100 }),
          task_id: Type.String({ minLength: 1, maxLength: 100 }),
        }),
      },
    },
    async (request, reply) => {
      const session = sessionOf(request)
      if (!(await endTask(db, session.user_id, request.body.task_id)))
        return sendLocalMessage(reply, 404, 'Tasks', 'You have no such task grant running.')
      return reply.redirect('/ui/account', 303)
    },
  )
}
