import type { Generated } from 'kysely'

/** The tables of the mfa area. */
export interface MfaTables {
  totp_credentials: {
    user_id: string
    secret_sealed: Buffer
    confirmed_at: Date | null
    last_step: Generated<number>
  }
}
