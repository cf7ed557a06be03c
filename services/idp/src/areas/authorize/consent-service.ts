import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { IdpDb } from '../../db.ts'
import { recordEvent } from '../accounts/index.ts'
import type { Lifecycle } from '../lifecycle/index.ts'
import type { IdpReactions } from '../../reactions.ts'
import type { AccountsService } from '../accounts/index.ts'
import { consentOf, deleteConsent, saveConsent } from './consent-store.ts'

export interface ConsentDeps {
  db: IdpDb
  receipts: ReceiptWriter
  accounts: AccountsService
}

async function subjectOf(accounts: AccountsService, db: IdpDb, userId: string) {
  return (await accounts.byId(db, userId))!.did!
}

/**
 * Records the user's decision on the scopes a client asked for: `openid` always granted, scopes
 * not asked about this time kept as they were. Newly granted scopes are receipted as
 * `consent.granted`, whose ledger leaf hash (base64, as the ledger names entries) becomes the
 * consent's commitment; scopes the user unticked are receipted as `consent.withdrawn`.
 */
export async function decideConsent(
  { db, receipts, accounts }: ConsentDeps,
  userId: string,
  client: { client_id: string; client_name: string },
  asked: string[],
  checked: string[],
) {
  const clientId = client.client_id
  await db.transaction().execute(async (trx) => {
    const previous = await consentOf(trx, userId, clientId)
    const granted = [
      ...new Set(['openid', ...previous.granted.filter((s) => !asked.includes(s)), ...checked]),
    ]
    const decided = [...new Set([...previous.decided, ...asked])]
    const added = granted.filter((s) => !previous.granted.includes(s))
    const removed = previous.granted.filter((s) => !granted.includes(s))
    let { commitment, purpose, granted_at } = previous
    if (added.length || removed.length) {
      const subject = await subjectOf(accounts, trx, userId)
      if (removed.length)
        await receipts.record(trx, {
          type: 'consent.withdrawn',
          subject,
          data: { client_id: clientId, scope: removed.join(' ') },
        })
      purpose = `access to your account by ${client.client_name}`
      const receipt = await receipts.record(trx, {
        type: 'consent.granted',
        subject,
        data: { client_id: clientId, scope: granted.join(' '), purpose },
      })
      commitment = receipt.leafHash
      granted_at = new Date(receipt.envelope.receipt.issued_at)
    }
    await saveConsent(trx, userId, clientId, { granted, decided, commitment, purpose, granted_at })
  })
}

/**
 * The user takes back everything granted to a client: the consent, its refresh tokens, receipted,
 * and the client told `consent.revoked`.
 */
export async function withdrawConsent(
  {
    db,
    receipts,
    accounts,
    lifecycle,
    reactions,
  }: ConsentDeps & { lifecycle: Lifecycle; reactions: IdpReactions },
  userId: string,
  clientId: string,
  context: { ip?: string; userAgent?: string },
) {
  return db.transaction().execute(async (trx) => {
    const previous = await consentOf(trx, userId, clientId)
    if (previous.granted_at) await lifecycle.announce(trx, userId, 'consent.revoked', {}, clientId)
    if (!(await deleteConsent(trx, userId, clientId))) return false
    await reactions.tell('consent.withdrawn', trx, { userId, clientId })
    await recordEvent(trx, userId, 'consent_withdrawn', context)
    await receipts.record(trx, {
      type: 'consent.withdrawn',
      subject: await subjectOf(accounts, trx, userId),
      data: { client_id: clientId, scope: previous.granted.join(' ') },
    })
    return true
  })
}
