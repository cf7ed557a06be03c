import { defineArea } from '../../context.ts'
import { issuerIdentity, issuerPqKey, issuerWitnessSeed } from './service.ts'

export { newDidKey, newUserKey, openUserKey } from './service.ts'

/** The issuer's own keys: its ledger did:key, its ML-DSA key and its witness seed, each made once. */
export const identityArea = defineArea({
  name: 'identity',
  async mount(_app, ctx) {
    return {
      ledger: await issuerIdentity(ctx.db, ctx.sealer),
      pq: await issuerPqKey(ctx.db, ctx.sealer),
      witnessSeed: await issuerWitnessSeed(ctx.db, ctx.sealer),
    }
  },
})
