/**
 * The rental's own did:key (offer packages, receipts, signed CVs), made once in app.ts and given
 * to every area on the context. Table: provider_identity (store.ts).
 */
export type { ProviderIdentity } from './identity.ts'
export { clientRef, providerIdentity } from './identity.ts'
