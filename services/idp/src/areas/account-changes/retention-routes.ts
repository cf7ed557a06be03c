import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import type { ChangeDeps } from './changes.ts'
import { holdOf, placeHold, releaseHold } from './retention.ts'

/** The admin places, reads and releases a legal hold on an account's data. */
export function retentionRoutes(app: App, deps: ChangeDeps & { adminToken: string }) {
  const admin = {
    onRequest: async (request: Parameters<typeof requireAdmin>[0]) => requireAdmin(request, deps.adminToken),
  }
  const tags = ['management']
  const params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
  const path = '/manage/v1/users/:id/retention-hold'
  app.put(
    path,
    {
      ...admin,
      schema: {
        summary:
          'Place a legal hold: the account’s data is kept, even if its owner deletes it, until released',
        tags,
        params,
        body: Type.Object(
          { reason: Type.String({ minLength: 1, maxLength: 500 }) },
          { additionalProperties: false },
        ),
      },
    },
    async (request) => placeHold(deps, request.params.id, request.body.reason),
  )
  app.get(
    path,
    { ...admin, schema: { summary: 'The account’s legal hold', tags, params } },
    async (request) => holdOf(deps.db, request.params.id),
  )
  app.delete(
    path,
    {
      ...admin,
      schema: {
        summary: 'Release the hold; a deletion the owner asked for meanwhile is carried out now',
        tags,
        params,
      },
    },
    async (request) => releaseHold(deps, request.params.id),
  )
}
