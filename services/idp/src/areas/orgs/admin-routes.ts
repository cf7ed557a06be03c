import type { App } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import type { IdpDb } from '../../db.ts'
import { OrgId, Organization, Quota } from './schemas.ts'
import { adminUpdate, allOrgs } from './service.ts'

/** The admin's view of organizations: list, disable (its clients become unknown), enable, quota. */
export function orgAdminRoutes(app: App, db: IdpDb, adminToken: string) {
  const admin = {
    onRequest: async (request: Parameters<typeof requireAdmin>[0]) => requireAdmin(request, adminToken),
  }
  const tags = ['management']
  const answer = { 200: Organization }

  app.get(
    '/manage/v1/organizations',
    {
      ...admin,
      schema: {
        summary: 'All organizations',
        tags,
        response: { 200: Type.Object({ organizations: Type.Array(Organization) }) },
      },
    },
    async () => ({ organizations: await allOrgs(db) }),
  )
  app.post(
    '/manage/v1/organizations/:id/disable',
    {
      ...admin,
      schema: {
        summary: 'Disable: its key and its clients stop working',
        tags,
        params: OrgId,
        response: answer,
      },
    },
    async (request) => adminUpdate(db, request.params.id, { disabled_at: new Date() }),
  )
  app.post(
    '/manage/v1/organizations/:id/enable',
    { ...admin, schema: { summary: 'Enable again', tags, params: OrgId, response: answer } },
    async (request) => adminUpdate(db, request.params.id, { disabled_at: null }),
  )
  app.post(
    '/manage/v1/organizations/:id/quota',
    {
      ...admin,
      schema: {
        summary: 'Adjust max_clients and token_rate_limit_per_min',
        tags,
        params: OrgId,
        body: Quota,
        response: answer,
      },
    },
    async (request) => adminUpdate(db, request.params.id, request.body),
  )
}
