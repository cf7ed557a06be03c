import { createHash } from 'node:crypto'
import { canonicalize } from '@svc/trust/jcs'
// imported, not read at run time, so the bundle npm start runs carries it too
import rules from '../../../constitution.json' with { type: 'json' }
import type { IdpDb } from '../../db.ts'
import { constitutionsByHash, insertConstitution } from './store.ts'
import { idpError } from '../../errors.ts'

/** `sha256:` and the hex SHA-256 of the JCS form (RFC 8785) of the rules. */
export const constitutionHash = (rules: Record<string, unknown>) =>
  `sha256:${createHash('sha256').update(canonicalize(rules)).digest('hex')}`

/**
 * The operating rules in force (services/idp/constitution.json), recorded under their hash the
 * first time this version runs, so every version ever published stays retrievable.
 */
export async function publishConstitution(db: IdpDb) {
  const hash = constitutionHash(rules)
  await insertConstitution(db, hash, rules)
  return { hash, rules }
}

/** A published version by its full hash (`sha256:` and 64 hex) or the first 16 hex characters of it. */
export async function constitutionByHash(db: IdpDb, given: string) {
  const full = /^sha256:[0-9a-f]{64}$/.test(given)
  if (!full && !/^[0-9a-f]{16}$/.test(given))
    throw idpError('invalid_request', 'the hash is sha256:<64 hex> or its first 16 hex characters')
  const rows = await constitutionsByHash(db, given, full)
  if (rows.length !== 1) throw idpError('not_found', `no constitution ${given}`)
  return rows[0]!
}
