import type { Generated } from 'kysely'

/** The tables of the sessions area. */
export interface SessionsTables {
  sessions: {
    id_hash: Buffer
    sid: string
    user_id: string
    amr: string[]
    acr: string
    auth_time: Date
    created_at: Generated<Date>
    expires_at: Date
    ended_at: Date | null
    ip: string | null
    user_agent: string | null
  }
  known_devices: {
    user_id: string
    device_hash: Buffer
    first_seen_at: Generated<Date>
    last_seen_at: Generated<Date>
  }
}
