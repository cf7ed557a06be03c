import { defineArea } from '../../context.ts'
import { keyRoutes } from './routes.ts'
import { SigningKeys } from './service.ts'

const ROTATION_CHECK_MS = 3600_000

/** Signing keys: made, rotated and retired on schedule; published at /jwks.json. */
export const keysArea = defineArea({
  name: 'keys',
  async mount(app, ctx) {
    const keys = new SigningKeys(ctx.db, ctx.sealer, {
      rotationDays: ctx.config.keyRotationDays,
      retentionHours: ctx.config.keyRetentionHours,
    })
    await keys.ensure()
    await keys.rotateIfDue()
    const rotation = setInterval(
      () => keys.rotateIfDue().catch((err) => ctx.log.error({ err }, 'scheduled key rotation failed')),
      ROTATION_CHECK_MS,
    )
    rotation.unref()
    app.addHook('onClose', async () => clearInterval(rotation))
    keyRoutes(app, keys, ctx.config.adminToken, ctx.discoveryLimit)
    return keys
  },
})
