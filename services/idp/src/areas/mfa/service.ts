import * as store from './store.ts'

/** What other areas may ask of second factors (in the caller's db or transaction). */
export const mfaService = {
  forgetUser: store.deleteTotpOf,
}
