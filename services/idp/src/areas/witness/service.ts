import { badRequest, forbidden, notFound } from '@svc/kit'
import { b64Encode } from '@svc/trust/base64url'
import { type Checkpoint, parseCheckpoint } from '@svc/trust/checkpoint'
import { cosignerFromKey, generateCosignerKey } from '@svc/trust/cosignature'
import { verifyConsistency } from '@svc/trust/merkle'
import { type NoteSigner, openNote, parseNote, signNote, verifierFromKey } from '@svc/trust/note'
import { type AddCheckpointRequest, parseAddCheckpoint } from '@svc/trust/witness'
import { type IdpDb, inTransaction } from '../../db.ts'
import { type LogState, lockLog, pinLog, recordCosignature, recordEvidence, trustedKeyOf } from './store.ts'
import { idpError } from '../../errors.ts'

export interface Witness {
  /** The witness's key name (`<issuer host>/witness`) and its cosignature verifier key. */
  name: string
  verifierKey: string
  /** The submission and monitoring prefix: `POST <prefix>/add-checkpoint`. */
  prefix: string
  cosigner: NoteSigner
}

export interface WitnessDeps {
  db: IdpDb
  witness: Witness
  /** Configured log verifier keys (IDP_WITNESS_LOGS). */
  logs: string[]
  /** Development: the ledger whose key is pinned at first contact when no log is configured. */
  pinFrom?: string
}

export function witnessOf(issuer: string, seed: Uint8Array): Witness {
  const name = `${new URL(issuer).host}/witness`
  const { signerKey, verifierKey } = generateCosignerKey(name, seed)
  return { name, verifierKey, prefix: `${issuer}/witness`, cosigner: cosignerFromKey(signerKey) }
}

/** The answer to a checkpoint whose old size is not the one cosigned last (C2SP: 409, text/x.tlog.size). */
export class SizeConflict extends Error {
  constructor(readonly size: number) {
    super(`the latest checkpoint this witness cosigned has size ${size}`)
  }
}

type Decision =
  | { cosign: true; lines: string }
  | { cosign: false; error: Error; evidence?: 'fork' | 'inconsistent'; cosigned?: string }

/**
 * C2SP tlog-witness add-checkpoint: verifies the log's signature, that the old size is the size
 * last cosigned for the origin, and the consistency proof from it; then cosigns and records the
 * new checkpoint in the same transaction that checked the old one (so two racing requests cannot
 * roll the witness back). A fork or an unprovable signed checkpoint is kept as evidence.
 */
export async function addCheckpoint(deps: WitnessDeps, body: string): Promise<string> {
  let request: AddCheckpointRequest
  let checkpoint: Checkpoint
  try {
    request = parseAddCheckpoint(body)
    checkpoint = parseCheckpoint(parseNote(request.note).text)
  } catch (err) {
    throw badRequest(`not an add-checkpoint request: ${(err as Error).message}`, 'malformed_request')
  }
  const key = await trustedKey(deps, checkpoint.origin)
  if (!key) throw notFound(`this witness does not witness the log ${checkpoint.origin}`, 'unknown_log')
  let text: string
  try {
    text = openNote(request.note, [verifierFromKey(key)]).text
  } catch (err) {
    throw forbidden(
      `the checkpoint is not signed by the log's key: ${(err as Error).message}`,
      'bad_signature',
    )
  }
  if (request.oldSize > checkpoint.size)
    throw badRequest(
      `old size ${request.oldSize} is beyond the checkpoint's size ${checkpoint.size}`,
      'invalid_sizes',
    )

  const decision = await inTransaction(deps.db, async (trx): Promise<Decision> => {
    const log = await lockLog(trx, checkpoint.origin, key)
    const refused = judge(log, request, checkpoint)
    if (refused) return refused
    const cosigned = signNote(text, [deps.witness.cosigner], [])
    const line = parseNote(cosigned).signatures[0]!.line
    await recordCosignature(trx, {
      origin: checkpoint.origin,
      size: checkpoint.size,
      rootHash: checkpoint.rootHash,
      checkpoint: `${request.note}${line}\n`,
    })
    return { cosign: true, lines: `${line}\n` }
  })
  if (decision.cosign) return decision.lines
  if (decision.evidence)
    await recordEvidence(deps.db, {
      origin: checkpoint.origin,
      kind: decision.evidence,
      cosigned_checkpoint: decision.cosigned ?? '',
      presented_request: body,
    })
  throw decision.error
}

function judge(log: LogState, request: AddCheckpointRequest, checkpoint: Checkpoint): Decision | undefined {
  const sameRoot = log.rootHash !== null && Buffer.from(checkpoint.rootHash).equals(log.rootHash)
  const fork = checkpoint.size === log.size && log.rootHash !== null && !sameRoot
  if (fork)
    return {
      cosign: false,
      error: new SizeConflict(log.size),
      evidence: 'fork',
      cosigned: log.checkpoint ?? '',
    }
  if (request.oldSize !== log.size) return { cosign: false, error: new SizeConflict(log.size) }
  const consistent =
    request.oldSize === 0
      ? request.proof.length === 0
      : verifyConsistency(log.size, checkpoint.size, log.rootHash!, checkpoint.rootHash, request.proof)
  if (consistent) return undefined
  return {
    cosign: false,
    error: idpError(
      'inconsistent_proof',
      `the consistency proof from size ${log.size} to ${checkpoint.size} does not verify`,
    ),
    ...(log.size > 0 ? { evidence: 'inconsistent' as const, cosigned: log.checkpoint ?? '' } : {}),
  }
}

/** The log key the witness trusts for `origin`: configured, pinned, or (development) pinned now. */
async function trustedKey(deps: WitnessDeps, origin: string): Promise<string | undefined> {
  const configured = deps.logs.find((key) => verifierFromKey(key).name === origin)
  if (configured) return configured
  if (deps.logs.length > 0) return undefined
  const pinned = await trustedKeyOf(deps.db, origin)
  if (pinned || !deps.pinFrom) return pinned
  const shown = await ledgerKey(deps.pinFrom)
  if (shown?.origin !== origin) return undefined
  return pinLog(deps.db, origin, shown.verifier_key)
}

async function ledgerKey(ledgerUrl: string) {
  try {
    const res = await fetch(`${ledgerUrl}/v1/key`, { signal: AbortSignal.timeout(5_000) })
    return res.ok ? ((await res.json()) as { origin: string; verifier_key: string }) : undefined
  } catch {
    return undefined
  }
}

export const rootOf = (hash: Buffer | null) => (hash ? b64Encode(hash) : null)
