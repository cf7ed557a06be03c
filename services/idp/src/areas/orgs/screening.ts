import type { ReceiptWriter } from '@svc/kit/receipts/writer'
import type { IdpDb } from '../../db.ts'
import type { OrgRow } from './store.ts'

/** How long screening waits for the ledger before answering without history. */
const LEDGER_TIMEOUT_MS = 3000
const HISTORY_LIMIT = 50

export interface ScreeningDeps {
  db: IdpDb
  receipts: ReceiptWriter
  ledger: { url: string; token: string }
}

/** Who is screened: an agent's DID, and what else names it (its owner, its client_id). */
export interface Screened {
  did: string
  owner?: string
  client_id?: string
}

interface HistoryEntry {
  type: string
  issuer: string
  issued_at: string
  leaf_hash: string
}

/** The ledger's receipts about the DID, oldest first; an unreachable ledger is said, never thrown. */
export async function ledgerHistory(deps: ScreeningDeps, did: string) {
  try {
    const query = new URLSearchParams({ subject: did, limit: String(HISTORY_LIMIT) })
    const res = await fetch(`${deps.ledger.url}/v1/receipts?${query}`, {
      headers: { authorization: `Bearer ${deps.ledger.token}` },
      signal: AbortSignal.timeout(LEDGER_TIMEOUT_MS),
    })
    if (!res.ok) return { history: [], history_error: `the ledger answered ${res.status}` }
    const body = (await res.json()) as {
      receipts: Array<{ leaf_hash: string; receipt: { type: string; issuer: string; issued_at: string } }>
    }
    const history: HistoryEntry[] = body.receipts.map((r) => ({
      type: r.receipt.type,
      issuer: r.receipt.issuer,
      issued_at: r.receipt.issued_at,
      leaf_hash: r.leaf_hash,
    }))
    return { history, history_error: null }
  } catch (err) {
    return { history: [], history_error: `the ledger could not be reached: ${(err as Error).message}` }
  }
}

/**
 * An organization screens an agent against its deny list (any of the agent's names listed is a
 * hit) and reads its history on the ledger. The decision is receipted as `kya.screening`, the
 * agent's DID its subject; the answer carries the receipt's leaf hash.
 */
export async function screenAgent(deps: ScreeningDeps, org: OrgRow, agent: Screened) {
  const names = [agent.did, agent.owner, agent.client_id].filter((n): n is string => Boolean(n))
  const hits = org.agent_deny_list.filter((entry) => names.includes(entry))
  const { history, history_error } = await ledgerHistory(deps, agent.did)
  const ok = hits.length === 0
  const receipt = await deps.receipts.record(deps.db, {
    type: 'kya.screening',
    subject: agent.did,
    data: {
      screened_by: org.did,
      ok,
      hits,
      ...(agent.owner ? { owner: agent.owner } : {}),
      ...(agent.client_id ? { client_id: agent.client_id } : {}),
    },
  })
  return { ok, hits, history, history_error, receipt: receipt.leafHash }
}
