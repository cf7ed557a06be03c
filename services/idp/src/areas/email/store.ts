import type { Generated } from 'kysely'

/** The tables of the email area. */
export interface EmailTables {
  email_tokens: {
    token_hash: Buffer
    user_id: string
    purpose: 'verify_email' | 'reset_password'
    created_at: Generated<Date>
    expires_at: Date
    used_at: Date | null
  }
  dev_outbox: { id: string; recipient: string; subject: string; body: string; created_at: Generated<Date> }
}
