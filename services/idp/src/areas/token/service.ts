import * as store from './store.ts'

/** What other areas may ask of refresh tokens (in the caller's db or transaction). */
export const tokenService = {
  /** The clients that hold or held a refresh family of the user. */
  clientIdsOfUser: store.clientIdsOfUser,
  refreshByHash: store.refreshByHash,
  /** Revokes every live token of a refresh family. */
  revokeFamily: store.revokeFamily,
  /** Ends every refresh family an account holds at one client (consent withdrawn). */
  revokeClientFamilies: store.revokeClientFamilies,
  /** Ends every refresh family of the account, of every client (credential change, disabled). */
  revokeUserFamilies: store.revokeUserFamilies,
}
