import { defineArea } from '../../context.ts'
import { passkeysService } from './service.ts'
import { passkeyRoutes } from './routes.ts'

export { PASSKEY_SCRIPT_PATH, passkeySection, passkeySignInForm } from './pages.ts'
export { registrationOptions, type RelyingParty, signInOptions } from './service.ts'

/** What other areas ask of passkeys: whether an account has one, and forgetting them. */
export type PasskeysService = typeof passkeysService

/** The passkeys' reads other areas share. */
export { passkeysOf } from './store.ts'

/** Passkeys (WebAuthn): registration and sign-in. */
export const passkeysArea = defineArea({
  name: 'passkeys',
  needs: ['receipts'],
  mount: (): PasskeysService => passkeysService,
  routes(app, ctx, { receipts }) {
    const rp = { db: ctx.db, kv: ctx.kv, rpId: new URL(ctx.issuer).hostname, origin: ctx.origin }
    passkeyRoutes(app, { ...rp, receipts, secureCookies: ctx.secureCookies })
  },
})
