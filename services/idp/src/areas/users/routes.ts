import { type App } from '@svc/kit'
import { Type } from 'typebox'
import { requireAdmin } from '../../admin.ts'
import { findUser, setDisabled, type UserAdminDeps } from './service.ts'
import { idpError } from '../../errors.ts'

const REASONS = ['hijacking', 'bulk-account'] as const

function reasonOf(body: unknown) {
  if (body === undefined || body === null) return undefined
  const reason = (body as { reason?: unknown }).reason
  if (reason === undefined) return undefined
  if (!REASONS.includes(reason as (typeof REASONS)[number]))
    throw idpError('invalid_request', `reason is one of ${REASONS.join(', ')}`)
  return reason as (typeof REASONS)[number]
}

/** The admin finds an account by its address, and disables or enables it. */
export function userAdminRoutes(app: App, deps: UserAdminDeps & { adminToken: string }) {
  const admin = {
    onRequest: async (request: Parameters<typeof requireAdmin>[0]) => requireAdmin(request, deps.adminToken),
  }
  const tags = ['management']
  const Id = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) })
  app.get(
    '/manage/v1/users',
    {
      ...admin,
      schema: {
        summary: 'Find an account by email',
        tags,
        querystring: Type.Object({ email: Type.String({ maxLength: 320 }) }),
      },
    },
    async (request) => findUser(deps, request.query.email),
  )
  app.post(
    '/manage/v1/users/:id/disable',
    {
      ...admin,
      schema: {
        summary: 'Disable an account: sessions and tokens end, clients get RISC account-disabled',
        tags,
        params: Id,
      },
    },
    // the body is optional: {"reason": "hijacking" | "bulk-account"}, RISC's account-disabled reasons
    async (request) => setDisabled(deps, request.params.id, true, reasonOf(request.body)),
  )
  app.post(
    '/manage/v1/users/:id/enable',
    { ...admin, schema: { summary: 'Enable a disabled account', tags, params: Id } },
    async (request) => setDisabled(deps, request.params.id, false),
  )
}
