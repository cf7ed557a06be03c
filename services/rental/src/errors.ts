import { errorCatalogue } from '@svc/kit'
import { accessErrors } from './errors/access.ts'
import { connectErrors } from './errors/connect.ts'
import { engagementErrors } from './errors/engagements.ts'
import { marketErrors } from './errors/market.ts'
import { moneyErrors } from './errors/money.ts'
import { recordErrors } from './errors/records.ts'

const groups = [accessErrors, engagementErrors, moneyErrors, marketErrors, recordErrors, connectErrors]
const localised = {
  ...accessErrors,
  ...engagementErrors,
  ...moneyErrors,
  ...marketErrors,
  ...recordErrors,
  ...connectErrors,
}
type Localised = typeof localised
if (Object.keys(localised).length !== groups.reduce((n, group) => n + Object.keys(group).length, 0))
  throw new Error('an error code is in two groups of the catalogue (errors/)')

const entries = Object.entries(localised) as [keyof Localised, Localised[keyof Localised]][]

/**
 * Every `error.code` the rental answers, with its status: routes raise them by name
 * (`rentalErrors.error('engagement_not_found', …)`), and the OpenAPI document lists them. The codes
 * are kept by area in errors/, each beside its Arabic text.
 */
export const rentalErrors = errorCatalogue(
  Object.fromEntries(entries.map(([code, { ar: _ar, ...spec }]) => [code, spec])) as {
    [K in keyof Localised]: Omit<Localised[K], 'ar'>
  },
)

export type RentalErrorCode = keyof typeof rentalErrors.codes
export const rentalError = rentalErrors.error

/**
 * The rental's error messages in Arabic, one per code: an `ar` member's or request's error answers
 * carry this as `message` (the English message, which may name an id, a state or a limit, stays
 * beside it as `detail`). English needs no catalogue of its own: its messages are the ones raised.
 */
export const AR_ERRORS = Object.fromEntries(entries.map(([code, { ar }]) => [code, ar])) as Record<
  RentalErrorCode,
  string
>
