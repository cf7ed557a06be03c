import { randomBytes } from 'node:crypto'
import { AppError } from '@svc/kit'
import type { IdpDb, IdpTables } from '../../db.ts'
import type { DeviceService } from '../device/index.ts'
import { atomically, type GrantDeps, respond, saveRefresh } from './grants.ts'
import { idpError } from '../../errors.ts'

export const DEVICE_CODE = 'urn:ietf:params:oauth:grant-type:device_code'
/** RFC 8628 §3.5: each slow_down adds this to the interval the client must keep. */
const SLOW_DOWN_STEP_S = 5

type Client = Pick<IdpTables['clients'], 'client_id' | 'subject_type' | 'redirect_uris' | 'organization_id'>

/**
 * RFC 8628 §3.5: why a poll gets no token. While the user has not answered, a poll sooner than
 * the interval after the last one is `slow_down` and lengthens the interval by 5 s for every
 * later poll; every poll is remembered, so the refusal is returned for the transaction to commit.
 */
async function pollRefusal(device: DeviceService, trx: IdpDb, hash: Buffer, clientId: string, now: Date) {
  const code = await device.lock(trx, hash)
  if (!code || code.client_id !== clientId)
    return idpError('invalid_grant', 'the device_code is invalid or was issued to another client')
  if (code.consumed_at) return idpError('invalid_grant', 'the device_code was already used')
  if (code.expires_at <= now)
    return idpError('expired_token', 'the device_code has expired: start a new authorization')
  if (code.status === 'denied') return new AppError(400, 'access_denied', 'the user denied the request')
  const early = code.last_polled_at && now.getTime() - code.last_polled_at.getTime() < code.interval_s * 1000
  const interval = early ? code.interval_s + SLOW_DOWN_STEP_S : code.interval_s
  await device.recordPoll(trx, hash, now, interval)
  return early
    ? idpError('slow_down', `poll at most every ${interval} s`)
    : idpError('authorization_pending', 'the user has not answered yet')
}

/** RFC 8628 §3.4: an approved device code gives the client its tokens once. */
export async function deviceCodeGrant(
  deps: GrantDeps,
  client: Client,
  body: { device_code?: string },
  jkt?: string,
) {
  if (!body.device_code) throw idpError('invalid_request', 'device_code is required')
  const hash = deps.device.digest(body.device_code)
  const saved = await atomically(deps, async (trx) => {
    const now = deps.now()
    const code = await deps.device.consumeApproved(trx, hash, client.client_id, now)
    if (!code) return pollRefusal(deps.device, trx, hash, client.client_id, now)
    const grant = {
      user_id: code.user_id!,
      sid: code.sid!,
      scope: code.scope,
      nonce: null,
      auth_time: code.auth_time!,
      acr: code.acr!,
      amr: code.amr!,
      resource: code.resource,
      task_id: null,
    }
    const family = { id: `rtf_${randomBytes(12).toString('base64url')}`, scope: code.scope, jkt: jkt ?? null }
    return { grant, task: undefined, refreshToken: await saveRefresh(trx, client, grant, family, undefined) }
  })
  return respond(deps, client, saved, jkt)
}
