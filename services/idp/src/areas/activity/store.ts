import type { Generated } from 'kysely'

/** The tables of the activity area. */
export interface ActivityTables {
  inbound_activity: {
    receipt_hash: string
    user_id: string
    client_id: string
    receipt_type: string
    issuer: string
    issued_at: Date
    received_at: Generated<Date>
  }
}
