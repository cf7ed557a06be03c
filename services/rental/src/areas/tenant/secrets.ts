import type { Sealer } from '@svc/kit'
import { inTransaction, type RentalDb } from '../../db.ts'
import { rentalError } from '../../errors.ts'
import type { Actor, EventService } from '../events/index.ts'
import * as store from './store.ts'
import type { SecretRow } from './store.ts'

/** How a connection or a webhook names a secret of its organization's vault. */
export const SECRET_SCHEME = 'secret://'
export const SECRET_NAME = '^[a-z][a-z0-9_.-]{0,63}$'
const NAME = new RegExp(SECRET_NAME)

/** The sealing context binds the organization and the name: a sealed value moved to another row does not open. */
const contextOf = (orgId: string, name: string) => `rental tenant secret v1 ${orgId} ${name}`

const view = (row: SecretRow) => ({
  name: row.name,
  version: row.version,
  reference: `${SECRET_SCHEME}${row.name}`,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
  updated_at: row.updated_at.toISOString(),
})

/** Stores the secret (a new one at version 1, a known one at its next version); answers its view, never its value. */
export async function putSecret(
  deps: { db: RentalDb; sealer: Sealer; events: EventService; now: () => Date },
  orgId: string,
  actor: Actor,
  input: { name: string; value: string },
) {
  const sealed = deps.sealer.seal(input.value, contextOf(orgId, input.name))
  return inTransaction(deps.db, async (trx) => {
    const now = deps.now()
    const row = await store.upsertSecret(trx, {
      org_id: orgId,
      name: input.name,
      version: 1,
      sealed,
      created_by: actor.id,
      created_at: now,
      updated_at: now,
    })
    await deps.events.record(trx, {
      orgId,
      type: 'secret.saved',
      subjects: { secret: input.name },
      actor,
      data: { name: input.name, version: row.version },
    })
    return view(row)
  })
}

export async function secretList(db: RentalDb, orgId: string) {
  const rows = await store.secretsOf(db, orgId)
  return rows.map(view)
}

export async function deleteSecret(db: RentalDb, orgId: string, name: string) {
  const gone = await store.deleteSecret(db, orgId, name)
  if (gone.numDeletedRows === 0n) throw rentalError('secret_not_found', `no secret ${name} in your vault`)
  return { name, deleted: true as const }
}

/**
 * The plaintext a `secret://name` reference names in the organization's vault, for the areas that
 * use secrets by reference (connections, webhooks): never answered by any route. Undefined when
 * the reference is malformed or names no secret.
 */
export async function resolveSecret(db: RentalDb, sealer: Sealer, orgId: string, reference: string) {
  if (!reference.startsWith(SECRET_SCHEME)) return undefined
  const name = reference.slice(SECRET_SCHEME.length)
  if (!NAME.test(name)) return undefined
  const row = await store.sealedSecret(db, orgId, name)
  return row ? sealer.open(row.sealed, contextOf(orgId, name)).toString('utf8') : undefined
}
