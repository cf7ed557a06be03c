/**
 * The payment rail: double-entry transfers between accounts, made once in app.ts and given to
 * every area on the context (the journal is the rail of this deployment).
 */
export type { PaymentRail, Posting, RailMovement, Transfer, TransferRequest } from './rail.ts'
export { JournalRail } from './journal.ts'
